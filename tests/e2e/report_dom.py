#!/usr/bin/env python3
# report_dom.py - opens a stitchbench report in headless Chromium and prints what was rendered, as JSON, for
# tests/e2e/test_report.sh to assert on: tables, each plot's <svg> and how much it drew, images, every fetch
# the page made, attributes that point outside the page, where each table and plot starts on a page 1280 px
# wide; plus a screenshot and how much of it is not blank.
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
document.getElementById('f').addEventListener('load', function () {
  var out = {};
  try {
    var w = this.contentWindow, d = this.contentDocument;
    out.title = d.title;
    out.tables = Array.from(d.querySelectorAll('table')).map(function (t) {
      return { id: t.id, rows: t.rows.length, top: t.getBoundingClientRect().top,
               head: Array.from(t.rows[0].cells).map(function (c) { return c.textContent; }),
               first_col: Array.from(t.rows).slice(1).map(function (r) { return r.cells[0].textContent; }) };
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
