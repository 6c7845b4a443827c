# Copyright 2026 The spark-shuffle-rdma authors
# SPDX-License-Identifier: Apache-2.0
# The Spark lines this tree builds and where each one's build output lives; sourced by
# bin/build-all-lines and bin/release so both name the lines the same way.
all_lines=(3.5_2.12 3.5_2.13 4.0 4.1 4.2)

profile_of() {  # Maven profile of a line
  case "$1" in
    3.5_2.12|3.5_2.13|4.0|4.1|4.2) echo "spark-$1" ;;
    *) return 1 ;;
  esac
}

dir_of() {  # build folder of a line, under shuffle-rdma/ (4.2 is the default build)
  case "$1" in
    4.2) echo "target" ;;
    3.5_2.12|3.5_2.13) echo "target/spark$1" ;;
    *) echo "target/spark$1_2.13" ;;
  esac
}

artifact_of() {  # published artifactId of a line: shuffle-rdma-spark4.2_2.13, ...
  case "$1" in
    3.5_2.12|3.5_2.13) echo "shuffle-rdma-spark$1" ;;
    4.0|4.1|4.2) echo "shuffle-rdma-spark$1_2.13" ;;
    *) return 1 ;;
  esac
}
