package org.apache.spark.shuffle.rdma.bench;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.AffineTransform;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import javax.imageio.ImageIO;

/** Bar charts as PNG with java.awt (headless), no charting library. */
public final class Charts {
  static final Color[] SERIES = {new Color(0x4C72B0), new Color(0xDD8452), new Color(0x55A868),
      new Color(0xC44E52)};

  private Charts() {}

  /**
   * Grouped bar chart. {@code values[s][c]} is series s in category c (NaN: no bar);
   * {@code dots[s][c]}, if not null, are individual measurements drawn over the bar;
   * {@code refLine}, if not null, is a dashed horizontal line (e.g. 1.0 for ratios).
   */
  public static void bars(Path out, String title, String yLabel, List<String> categories,
      List<String> series, double[][] values, double[][][] dots, Double refLine,
      boolean rotateLabels) throws IOException {
    System.setProperty("java.awt.headless", "true");
    int nc = categories.size();
    int ns = series.size();
    int groupW = Math.max(rotateLabels ? 12 : 60, ns * (rotateLabels ? 10 : 40) + 14);
    int left = 80, right = 30, top = 60, bottom = rotateLabels ? 70 : 50;
    int plotW = Math.max(Math.max(420, title.length() * 9 - left), nc * groupW);
    int w = left + plotW + right, h = top + 360 + bottom + (ns > 1 ? 24 : 0);
    int plotH = 360;
    double max = 0;
    for (double[] row : values) for (double v : row) if (!Double.isNaN(v)) max = Math.max(max, v);
    if (dots != null) {
      for (double[][] s : dots) for (double[] c : s) if (c != null) for (double v : c) {
        max = Math.max(max, v);
      }
    }
    if (refLine != null) max = Math.max(max, refLine);
    double step = niceStep(max / 5);
    double yMax = Math.max(step, Math.ceil(max * 1.08 / step) * step);

    BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
    Graphics2D g = img.createGraphics();
    g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
    g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING,
        RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
    g.setColor(Color.WHITE);
    g.fillRect(0, 0, w, h);
    g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 15));
    g.setColor(Color.BLACK);
    g.drawString(title, left, 28);
    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
    FontMetrics fm = g.getFontMetrics();

    // Axes and grid.
    for (double y = 0; y <= yMax + 1e-9; y += step) {
      int py = top + plotH - (int) Math.round(y / yMax * plotH);
      g.setColor(new Color(0xE5E5E5));
      g.drawLine(left, py, left + plotW, py);
      g.setColor(Color.DARK_GRAY);
      String s = fmt(y, step);
      g.drawString(s, left - 6 - fm.stringWidth(s), py + 4);
    }
    g.setColor(Color.BLACK);
    g.drawLine(left, top, left, top + plotH);
    g.drawLine(left, top + plotH, left + plotW, top + plotH);
    AffineTransform saved = g.getTransform();
    g.rotate(-Math.PI / 2);
    g.drawString(yLabel, -(top + plotH / 2 + fm.stringWidth(yLabel) / 2), 18);
    g.setTransform(saved);

    double gw = (double) plotW / nc;
    double bw = Math.max(2, (gw - 6) / ns);
    for (int c = 0; c < nc; c++) {
      double gx = left + c * gw + 3;
      for (int s = 0; s < ns; s++) {
        double v = values[s][c];
        int x = (int) Math.round(gx + s * bw);
        if (!Double.isNaN(v)) {
          int bh = (int) Math.round(v / yMax * plotH);
          g.setColor(SERIES[s % SERIES.length]);
          g.fillRect(x, top + plotH - bh, Math.max(1, (int) bw - 1), bh);
          if (!rotateLabels) {
            g.setColor(Color.BLACK);
            String lab = fmt(v, step / 10);
            g.drawString(lab, x + (int) (bw / 2) - fm.stringWidth(lab) / 2, top + plotH - bh - 4);
          }
        }
        if (dots != null && dots[s][c] != null) {
          g.setColor(Color.BLACK);
          for (double d : dots[s][c]) {
            int py = top + plotH - (int) Math.round(d / yMax * plotH);
            g.fillOval(x + (int) (bw / 2) - 3, py - 3, 6, 6);
          }
        }
      }
      g.setColor(Color.BLACK);
      String lab = categories.get(c);
      int cx = (int) Math.round(gx + gw / 2 - 3);
      if (rotateLabels) {
        AffineTransform t = g.getTransform();
        g.rotate(-Math.PI / 2, cx + 4, top + plotH + 6);
        g.drawString(lab, cx + 4 - fm.stringWidth(lab), top + plotH + 6);
        g.setTransform(t);
      } else {
        g.drawString(lab, cx - fm.stringWidth(lab) / 2, top + plotH + 18);
      }
    }
    if (refLine != null) {
      int py = top + plotH - (int) Math.round(refLine / yMax * plotH);
      g.setColor(Color.RED);
      g.setStroke(new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f,
          new float[] {6f, 4f}, 0f));
      g.drawLine(left, py, left + plotW, py);
      g.setStroke(new BasicStroke(1f));
    }
    if (ns > 1) {
      int lx = left;
      int ly = h - 14;
      for (int s = 0; s < ns; s++) {
        g.setColor(SERIES[s % SERIES.length]);
        g.fillRect(lx, ly - 10, 12, 12);
        g.setColor(Color.BLACK);
        g.drawString(series.get(s), lx + 16, ly);
        lx += 30 + fm.stringWidth(series.get(s));
      }
    }
    g.dispose();
    ImageIO.write(img, "png", out.toFile());
  }

  static double niceStep(double raw) {
    if (raw <= 0) return 1;
    double e = Math.pow(10, Math.floor(Math.log10(raw)));
    double f = raw / e;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * e;
  }

  static String fmt(double v, double step) {
    if (step >= 1) return String.format("%.0f", v);
    if (step >= 0.1) return String.format("%.1f", v);
    if (step >= 0.01) return String.format("%.2f", v);
    return String.format("%.3f", v);
  }
}
