/*
 * Copyright 2026 The spark-shuffle-rdma authors
 * SPDX-License-Identifier: Apache-2.0
 */
package org.apache.spark.shuffle.rdma.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.geom.Ellipse2D;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.CategoryLabelPositions;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.DatasetRenderingOrder;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.LineAndShapeRenderer;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.title.TextTitle;
import org.jfree.data.category.DefaultCategoryDataset;

/** Grouped bar charts as PNG, drawn by JFreeChart (headless). */
public final class Charts {
  static final Color[] SERIES = {new Color(0x4C72B0), new Color(0xDD8452), new Color(0x55A868),
      new Color(0xC44E52)};
  /** Gap between bars of one category, as a fraction of the category's width. */
  private static final double ITEM_MARGIN = 0.05;

  private Charts() {}

  /**
   * Grouped bar chart. {@code values[s][c]} is series s in category c (NaN: no bar);
   * {@code dots[s][c]}, if not null, are individual measurements drawn over the bar;
   * {@code refLine}, if not null, is a dashed horizontal line (e.g. 1.0 for ratios).
   * The legend names the series when there are several or when the chart is a ratio.
   */
  public static void bars(Path out, String title, String yLabel, List<String> categories,
      List<String> series, double[][] values, double[][][] dots, Double refLine,
      boolean rotateLabels) throws IOException {
    System.setProperty("java.awt.headless", "true");
    int nc = categories.size();
    int ns = series.size();

    DefaultCategoryDataset bars = new DefaultCategoryDataset();
    for (int s = 0; s < ns; s++) {
      for (int c = 0; c < nc; c++) {
        double v = values[s][c];
        bars.addValue(Double.isNaN(v) ? null : v, series.get(s), categories.get(c));
      }
    }
    CategoryAxis xAxis = new CategoryAxis();
    if (rotateLabels) {
      xAxis.setCategoryLabelPositions(CategoryLabelPositions.UP_90);
    }
    NumberAxis yAxis = new NumberAxis(yLabel);
    yAxis.setAutoRangeIncludesZero(true);
    BarRenderer barRenderer = new BarRenderer();
    barRenderer.setBarPainter(new StandardBarPainter());
    barRenderer.setShadowVisible(false);
    barRenderer.setItemMargin(ITEM_MARGIN);
    barRenderer.setDrawBarOutline(false);
    for (int s = 0; s < ns; s++) {
      barRenderer.setSeriesPaint(s, SERIES[s % SERIES.length]);
    }
    if (!rotateLabels) {
      barRenderer.setDefaultItemLabelGenerator(
          new StandardCategoryItemLabelGenerator("{2}", new java.text.DecimalFormat("0.###")));
      barRenderer.setDefaultItemLabelsVisible(true);
    }
    CategoryPlot plot = new CategoryPlot(bars, xAxis, yAxis, barRenderer);
    plot.setBackgroundPaint(Color.WHITE);
    plot.setRangeGridlinePaint(new Color(0xD0D0D0));

    // One dataset per repetition, drawn as dots at the bars' offsets (the renderers share
    // the bar renderer's series offsets because both use the same series count and margin).
    int reps = 0;
    if (dots != null) {
      for (double[][] s : dots) for (double[] c : s) if (c != null) reps = Math.max(reps, c.length);
    }
    for (int r = 0; r < reps; r++) {
      DefaultCategoryDataset rep = new DefaultCategoryDataset();
      for (int s = 0; s < ns; s++) {
        for (int c = 0; c < nc; c++) {
          double[] d = dots[s][c];
          rep.addValue(d != null && r < d.length ? d[r] : null, series.get(s), categories.get(c));
        }
      }
      LineAndShapeRenderer dotRenderer = new LineAndShapeRenderer(false, true);
      dotRenderer.setUseSeriesOffset(true);
      dotRenderer.setItemMargin(ITEM_MARGIN);
      dotRenderer.setDefaultSeriesVisibleInLegend(false);
      for (int s = 0; s < ns; s++) {
        dotRenderer.setSeriesPaint(s, Color.BLACK);
        dotRenderer.setSeriesShape(s, new Ellipse2D.Double(-3, -3, 6, 6));
      }
      plot.setDataset(r + 1, rep);
      plot.setRenderer(r + 1, dotRenderer);
    }
    plot.setDatasetRenderingOrder(DatasetRenderingOrder.FORWARD);
    if (refLine != null) {
      ValueMarker marker = new ValueMarker(refLine);
      marker.setPaint(Color.RED);
      marker.setStroke(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f,
          new float[] {6f, 4f}, 0f));
      plot.addRangeMarker(marker);
    }

    // A legend when it says something: several series, or a ratio (which manager over which).
    boolean legend = ns > 1 || refLine != null;
    JFreeChart chart = new JFreeChart(null, JFreeChart.DEFAULT_TITLE_FONT, plot, legend);
    chart.setTitle(new TextTitle(title, new Font(Font.SANS_SERIF, Font.BOLD, 15)));
    chart.setBackgroundPaint(Color.WHITE);
    int width = Math.max(Math.max(560, title.length() * 9), 80 + nc * Math.max(
        rotateLabels ? 14 : 70, ns * (rotateLabels ? 10 : 40) + 14));
    int height = 480 + (rotateLabels ? 40 : 0) + (legend ? 24 : 0);
    ChartUtils.saveChartAsPNG(out.toFile(), chart, width, height);
  }
}
