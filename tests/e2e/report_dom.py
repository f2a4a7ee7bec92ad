#!/usr/bin/env python3
# report_dom.py - opens a stitchbench report in headless Chromium and prints what was rendered, as JSON, for
# tests/e2e/test_report.sh and test_report_plots.sh to assert on: tables, each plot's <svg> and how much it
# drew, images, every fetch the page made, attributes that point outside the page, where each table and plot
# starts on a page 1280 px wide; per plot, every text's rendered size and box, each series' key, colours and
# vertices, and its panels' frames; plus a screenshot and how much of it is not blank.
# Usage: report_dom.py REPORT.html SCREENSHOT.png
import html
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

# Runs inside a page that holds the report in an iframe (same origin with --allow-file-access-from-files),
# once the report has loaded, and writes its findings into <pre id="facts">.
PROBE = r"""
// Each <text> as rendered: its characters, its font size in page pixels (the computed size times the scale
// from its user units to the page, so a shrunk SVG counts as small), the four corners of its box on the page
// (rotated labels stay rotated boxes) and the point its transform puts it at (labels of one axis share a
// baseline or a column).
function textBoxes(s) {
  return Array.from(s.querySelectorAll('text')).filter(function (t) { return t.textContent.trim(); }).map(function (t) {
    var b = t.getBBox(), m = t.getScreenCTM(), size = parseFloat(getComputedStyle(t).fontSize);
    var corner = function (x, y) { return [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]; };
    var at = t.parentNode.getScreenCTM ? t.parentNode.getScreenCTM() : m;
    return { text: t.textContent, px: size * Math.sqrt(m.a * m.a + m.b * m.b),
             angle: Math.round(Math.atan2(m.b, m.a) * 180 / Math.PI),
             at: [at.e, at.f], anchor: getComputedStyle(t).textAnchor,
             quad: [corner(b.x, b.y), corner(b.x + b.width, b.y), corner(b.x + b.width, b.y + b.height),
                    corner(b.x, b.y + b.height)] };
  });
}
// gnuplot draws each plotted series (and its key entry) in a group of its own: its key text, the colours
// its lines, points and bars are drawn in (a point's colour is the CSS color its symbol takes, a hatched
// bar's the colour of its pattern's lines), and the vertices of its lines on the page, key sample left out.
function series(s) {
  var d = s.ownerDocument;
  return Array.from(s.querySelectorAll('g[id*="gnuplot_plot_"]')).map(function (g) {
    var colours = {}, points = [], keys = [];
    var add = function (c) {
      var u = /url\("?#([^")]+)"?\)/.exec(c);
      if (!u) { colours[c] = 1; return; }
      var pat = d.getElementById(u[1]);
      if (pat) pat.querySelectorAll('path, line, rect, polygon').forEach(function (e) {
        var cs = getComputedStyle(e);
        if (cs.stroke !== 'none') colours[cs.stroke] = 1;
        if (cs.fill !== 'none') colours[cs.fill] = 1;
      });
    };
    g.querySelectorAll('text').forEach(function (t) { if (t.textContent.trim()) keys.push(t.textContent); });
    g.querySelectorAll('path, use, rect, circle, polygon, polyline, line').forEach(function (e) {
      if (e.closest('pattern')) return;
      var cs = getComputedStyle(e);
      if (e.tagName === 'use') add(cs.color);
      else {
        if (cs.stroke && cs.stroke !== 'none') add(cs.stroke);
        if (cs.fill && cs.fill !== 'none') add(cs.fill);
      }
      if (e.tagName === 'path' && e.getAttribute('d')) {
        // a titled series' first segment is its key sample: the data is the rest
        var segs = e.getAttribute('d').split('M').filter(function (x) { return x.trim(); });
        var m = e.getScreenCTM();
        segs.forEach(function (seg, i) {
          if (keys.length && i === 0 && segs.length > 1) return;
          (seg.match(/-?[0-9.]+,-?[0-9.]+/g) || []).forEach(function (pt) {
            var p = pt.split(',').map(Number);
            points.push([m.a * p[0] + m.c * p[1] + m.e, m.b * p[0] + m.d * p[1] + m.f]);
          });
        });
      }
    });
    return { id: g.id, keys: keys, colours: Object.keys(colours), points: points };
  });
}
// The frames of a plot's panels (gnuplot's border: a closed rectangle outside every series), on the page.
function frames(s) {
  return Array.from(s.querySelectorAll('path')).filter(function (e) {
    return !e.closest('g[id*="gnuplot_plot_"]') && !e.closest('defs') &&
           /^M[-0-9.]+,[-0-9.]+( L[-0-9.]+,[-0-9.]+){4} Z\s*$/.test((e.getAttribute('d') || '').trim());
  }).map(function (e) {
    var r = e.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom];
  }).filter(function (r) { return r[2] - r[0] > 50 && r[3] - r[1] > 50; });
}

document.getElementById('f').addEventListener('load', function () {
  var out = {};
  try {
    var w = this.contentWindow, d = this.contentDocument;
    out.title = d.title;
    out.tables = Array.from(d.querySelectorAll('table')).map(function (t) {
      return { id: t.id, rows: t.rows.length, top: t.getBoundingClientRect().top,
               head: Array.from(t.rows[0].cells).map(function (c) { return c.textContent; }),
               first_col: Array.from(t.rows).slice(1).map(function (r) { return r.cells[0].textContent; }),
               body: Array.from(t.rows).slice(1).map(function (r) {
                 return Array.from(r.cells).map(function (c) { return c.textContent; }); }) };
    });
    out.figures = Array.from(d.querySelectorAll('figure')).map(function (f) {
      var s = f.querySelector('svg'), r = s ? s.getBoundingClientRect() : null, drawn = 0, points = 0, texts = [];
      if (s) {
        s.querySelectorAll('path, polyline, polygon, line, rect, circle, use').forEach(function (e) {
          var b = e.getBBox();
          if (b.width > 0 || b.height > 0) drawn++;
          if (e.tagName === 'use' && (b.width > 0 || b.height > 0)) points++;  // gnuplot's data points
        });
        s.querySelectorAll('text').forEach(function (t) { texts.push(t.textContent); });
      }
      return { id: f.id, svg: !!s, width: r ? r.width : 0, height: r ? r.height : 0, drawn: drawn, points: points,
               top: f.getBoundingClientRect().top,
               texts: texts,
               box: r ? [r.left, r.top, r.right, r.bottom] : null,
               text_boxes: s ? textBoxes(s) : [],
               series: s ? series(s) : [],
               frames: s ? frames(s) : [],
               caption: (f.querySelector('figcaption') || {}).textContent || '' };
    });
    out.images = Array.from(d.images).map(function (i) {
      return { src: i.getAttribute('src'), complete: i.complete, width: i.naturalWidth };
    });
    out.svg_images = d.querySelectorAll('svg image').length;
    out.scripts = d.querySelectorAll('script').length;
    out.notes = Array.from(d.querySelectorAll('p.note')).map(function (p) { return p.textContent; });
    out.headings = Array.from(d.querySelectorAll('h2')).map(function (h) { return h.id; });
    out.fetched = w.performance.getEntriesByType('resource').map(function (e) { return e.name; });
    var outside = [];
    d.querySelectorAll('*').forEach(function (e) {
      Array.from(e.attributes).forEach(function (a) {
        var v = a.value.trim();
        if (/^(https?:|\/\/|file:|data:|javascript:)/i.test(v) && a.name !== 'xmlns' ||
            /url\(\s*['"]?(?!#)/i.test(v) || /^on/i.test(a.name) ||
            ((a.name === 'href' || a.name === 'xlink:href' || a.name === 'src') && v[0] !== '#'))
          outside.push(e.tagName + ' ' + a.name + '=' + v.slice(0, 80));
      });
    });
    out.outside = outside;
    out.ids_unique = (function () {
      var seen = {}, dup = [];
      d.querySelectorAll('[id]').forEach(function (e) { if (seen[e.id]) dup.push(e.id); seen[e.id] = 1; });
      return dup;
    })();
  } catch (e) { out.error = String(e); }
  document.getElementById('facts').textContent = JSON.stringify(out);
});
"""


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("report_dom.py: chromium is not installed")


def run(argv):
    # root (CI containers) needs --no-sandbox; a container's small /dev/shm needs --disable-dev-shm-usage
    base = [chromium(), "--headless", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage", "--hide-scrollbars",
            "--allow-file-access-from-files", "--user-data-dir=" + tempfile.mkdtemp(prefix="sbchrome.")]
    return subprocess.run(base + argv, capture_output=True, text=True, timeout=120)


def png_stats(path):
    """Decodes an 8-bit RGB(A) PNG by hand (no PIL here): how many pixels are not white, how many colours."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "unexpected PNG format"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride = zlib.decompress(idat), width * bpp
    prev, nonwhite, colours, i = bytearray(stride), 0, set(), 0
    for _ in range(height):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, bpp * 4):  # every 4th pixel is enough to tell a page from a blank
            px = bytes(line[x:x + 3])
            colours.add(px)
            nonwhite += px != b"\xff\xff\xff"
        prev = line
    return {"width": width, "height": height, "nonwhite_fraction": nonwhite / (width * height / 4),
            "colours": len(colours)}


def main():
    report, shot = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    work = tempfile.mkdtemp(prefix="sbdom.")
    wrapper = os.path.join(work, "probe.html")
    with open(wrapper, "w") as f:
        f.write('<!doctype html><html><body><pre id="facts">not loaded</pre>'
                '<iframe id="f" style="width:1280px;height:4000px" src="file://%s"></iframe>'
                '<script>%s</script></body></html>' % (report, PROBE))
    r = run(["--dump-dom", "file://" + wrapper])
    m = re.search(r'<pre id="facts">(.*?)</pre>', r.stdout, re.S)
    facts = {"error": "no facts: " + r.stderr[-400:]} if not m else json.loads(html.unescape(m.group(1)))
    r = run(["--window-size=1280,2000", "--screenshot=" + shot, "file://" + report])
    facts["screenshot"] = png_stats(shot) if os.path.exists(shot) else {"error": r.stderr[-400:]}
    shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(facts))


main()
