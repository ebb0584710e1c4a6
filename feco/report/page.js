// The report's charts, drawn with Plotly from the one payload in #feco-data (see cube.py).
// Links of the form #trend/<feature>/<dim>/<value> open a feature's trend in a segment.
"use strict";

const DATA = JSON.parse(document.getElementById("feco-data").textContent);
const CUBE = DATA.cube;
const MISSING = 65535;
const DAYS = CUBE.days;
const D = DAYS.length;
const S = CUBE.segments.length;
const PLOT = { displaylogo: false, responsive: true };
const $ = (id) => document.getElementById(id);

function unpack(text, Type) {
  const bytes = Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  return new Type(bytes.buffer);  // little-endian, as cube.pack wrote it
}

const SHARES = {};
for (const name of ["coverage", "coverage_ma7", "expected", "lower", "shap_share"]) SHARES[name] = unpack(CUBE[name], Uint16Array);
const ROWS = unpack(CUBE.rows, Uint32Array);
const FEATURE = new Map(CUBE.features.map((f, i) => [f, i]));
const SEGMENT = new Map(CUBE.segments.map(([dim, value], i) => [dim + "\u0000" + value, i]));
const DIMS = [...new Set(CUBE.segments.map(([dim]) => dim))];

// A share of feature f in segment s per day, in percent; null where the day has none.
function share(name, f, s) {
  const values = SHARES[name];
  const start = (f * S + s) * D;
  return Array.from(values.subarray(start, start + D), (v) => (v === MISSING ? null : v / 100));
}

function rows(s) {
  return Array.from(ROWS.subarray(s * D, (s + 1) * D));
}

// Coverage of a segment line, left out on days too thin to read.
function readable(f, s) {
  const counts = rows(s);
  return share("coverage", f, s).map((v, d) => (counts[d] >= DATA.min_rows ? v : null));
}

function segmentsOf(dim) {
  return CUBE.segments.map((segment, s) => ({ value: segment[1], s })).filter((_, s) => CUBE.segments[s][0] === dim);
}

// Text from the logs as a Plotly label shows it: labels read a subset of HTML (<a href>, <br>)
// and entities, hover templates read %{...}; written as entities, a value shows as it is.
function plain(text) {
  return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/%/g, "&#37;");
}

// A value from the logs as the page shows it: at most 80 characters (build.SHOWN_CHARACTERS),
// the rest an ellipsis; the page's data hold it whole, once.
function shown(text) {
  const characters = [...String(text)];
  return characters.length > 80 ? characters.slice(0, 79).join("") + "\u2026" : String(text);
}

// A segment as a Plotly label.
function describe(dim, value) {
  return plain(dim === "all" ? "all traffic" : `${dim}: ${shown(value)}`);  // as build.segment_label
}

function fill(select, options, chosen) {
  select.replaceChildren(...options.map((o) => new Option(shown(o), o)));
  if (options.includes(chosen)) select.value = chosen;
}

function layout(title, yTitle, extra = {}) {
  return {
    title: { text: title, font: { size: 15 } }, margin: { t: 48, r: 20, b: 40, l: 60 },
    yaxis: { title: { text: yTitle } }, xaxis: { type: "date" }, hovermode: "x unified",
    legend: { orientation: "h", y: -0.15 }, ...extra,
  };
}

// --- coverage trend: one feature in one segment beside its sibling segments ---------------

const trend = { feature: $("trend-feature"), dim: $("trend-dim"), value: $("trend-value") };

function trendValues() {
  fill(trend.value, segmentsOf(trend.dim.value).map((seg) => seg.value), trend.value.value);
}

function drawTrend() {
  const f = FEATURE.get(trend.feature.value);
  const dim = trend.dim.value;
  const value = trend.value.value;
  const s = SEGMENT.get(dim + "\u0000" + value);
  const traces = segmentsOf(dim).filter((seg) => seg.s !== s).map((seg, k) => ({
    x: DAYS, y: readable(f, seg.s), name: `other ${plain(dim)} values`, legendgroup: "siblings", showlegend: k === 0,
    mode: "lines", line: { color: "#c4c4c4", width: 1 }, hovertemplate: `${plain(shown(seg.value))} %{y:.2f}%<extra></extra>`,
  }));
  traces.push(
    { x: DAYS, y: share("lower", f, s), name: "alert below (drop rule)", mode: "lines",
      line: { color: "rgba(214,39,40,0.6)", width: 1, dash: "dot" }, hovertemplate: "alert below %{y:.2f}%<extra></extra>" },
    { x: DAYS, y: share("expected", f, s), name: "expected (drop rule)", mode: "lines", fill: "tonexty",
      fillcolor: "rgba(31,119,180,0.12)", line: { color: "#1f77b4", width: 1.5, dash: "dash" },
      hovertemplate: "expected %{y:.2f}%<extra></extra>" },
    { x: DAYS, y: share("coverage_ma7", f, s), name: "7-day average", mode: "lines",
      line: { color: "#666", width: 1.5, dash: "dashdot" }, hovertemplate: "7-day average %{y:.2f}%<extra></extra>" },
    { x: DAYS, y: share("coverage", f, s), customdata: rows(s), name: `coverage, ${describe(dim, value)}`,
      mode: "lines+markers", line: { color: "#111", width: 2.5 }, marker: { size: 5 },
      hovertemplate: "coverage %{y:.2f}% of %{customdata:,} rows<extra></extra>" },
  );
  const marks = DATA.marks.filter((m) => m.feature === trend.feature.value && m.s === s);
  if (marks.length) {
    // Each alert with the band its own rule used that day: a dash at what it expected, a
    // whisker down to the line it fires below (a decay compares the 7-day average).
    traces.push({
      x: marks.map((m) => m.ds), y: marks.map((m) => 100 * m.baseline), name: "band the alert used", mode: "markers",
      marker: { color: "#d62728", size: 14, symbol: "line-ew-open", line: { width: 2, color: "#d62728" } },
      error_y: { type: "data", symmetric: false, array: marks.map(() => 0), color: "#d62728", thickness: 1.5, width: 0,
        arrayminus: marks.map((m) => 100 * (m.baseline - m.threshold)) },
      hoverinfo: "skip",
    }, {
      x: marks.map((m) => m.ds), y: marks.map((m) => 100 * m.observed), name: "alert", mode: "markers",
      marker: { color: "#d62728", size: 13, symbol: "x-thin-open", line: { width: 3, color: "#d62728" } },
      customdata: marks.map((m) => `${m.rule} (${m.status}, ${m.severity}): saw ${(100 * m.observed).toFixed(2)}%, expected ${(100 * m.baseline).toFixed(2)}%, fires below ${(100 * m.threshold).toFixed(2)}%`),
      hovertemplate: "%{customdata}<extra></extra>",
    });
  }
  const title = `${plain(trend.feature.value)} in ${describe(dim, value)}: ${marks.length} alert day${marks.length === 1 ? "" : "s"}`;
  Plotly.react("trend-chart", traces, layout(title, "coverage (%)"), PLOT);
}

function showTrend(feature, dim, value) {
  if (!FEATURE.has(feature) || !SEGMENT.has(dim + "\u0000" + value)) return false;
  trend.feature.value = feature;
  trend.dim.value = dim;
  trendValues();
  trend.value.value = value;
  drawTrend();
  return true;
}

function trendLink(feature, dim, value) {
  return "#trend/" + [feature, dim, value].map(encodeURIComponent).join("/");
}

function followHash() {
  const parts = location.hash.split("/");
  if (parts[0] !== "#trend" || parts.length !== 4) return;
  if (showTrend(...parts.slice(1).map(decodeURIComponent))) $("coverage").scrollIntoView();
}

function onTrendChange() {
  drawTrend();
  history.replaceState(null, "", trendLink(trend.feature.value, trend.dim.value, trend.value.value));
}

// --- heatmap: each cell's worst segment against the drop rule's expectation ----------------

function drawHeatmap() {
  const dim = $("heatmap-dim").value;
  const grid = DATA.heatmap[dim];
  const text = grid.segment.map((row, f) => row.map((s, d) => {
    const unjudged = grid.unjudged[f][d] ? notJudged(grid.unjudged[f][d]) : null;
    if (s === null || grid.z[f][d] === null) return unjudged || "not judged";
    const at = (f * S + s) * D + d;
    const pct = (name) => (SHARES[name][at] / 100).toFixed(2) + "%";
    const judged = `${describe(...CUBE.segments[s])}: ${pct("coverage")}, expected ${pct("expected")}, alert below ${pct("lower")}`;
    return unjudged ? `${judged}<br>${unjudged}` : judged;
  }));
  const trace = {
    type: "heatmap", x: DAYS, y: CUBE.features.map(plain), z: grid.z, customdata: text, zmin: -3, zmax: 3, xgap: 1, ygap: 1,
    // White within half a margin of expected: the worst of a dimension's values sits a little
    // below by chance every day, and tinting that would colour the whole grid.
    colorscale: [[0, "#67001f"], [1 / 3, "#d6604d"], [5 / 12, "#f7f7f7"], [7 / 12, "#f7f7f7"], [2 / 3, "#92c5de"], [1, "#2166ac"]],
    colorbar: { title: { text: "margins from<br>expected" }, tickvals: [-3, -1, 0, 1, 3], ticktext: ["≤ −3", "−1: alert line", "0", "1", "≥ 3"] },
    hovertemplate: "%{y}, %{x}<br>%{customdata}<br>%{z} margins<extra></extra>",
  };
  const height = Math.max(320, 120 + 16 * CUBE.features.length);
  Plotly.react("heatmap-chart", [trace], {
    title: { text: `Coverage against the drop rule's expectation, worst ${plain(dim)} value per cell`, font: { size: 15 } },
    margin: { t: 48, r: 20, b: 40, l: 170 }, height, yaxis: { autorange: "reversed", tickfont: { size: 10 } },
    xaxis: { type: "date" },
  }, PLOT);
}

// A cell's segments too small to judge, each [its index in CUBE.segments, its rows].
function notJudged(segments) {
  const listed = segments.map(([s, n]) => `${plain(shown(CUBE.segments[s][1]))} (${n} rows)`).join(", ");
  return `not judged: ${listed}, under min_rows (${DATA.heatmap_min_rows.toLocaleString("en-US")})`;
}

function heatmapClick(event) {
  const point = event.points[0];
  const s = DATA.heatmap[$("heatmap-dim").value].segment[point.pointIndex[0]][point.pointIndex[1]];
  if (s !== null) location.hash = trendLink(CUBE.features[point.pointIndex[0]], ...CUBE.segments[s]);
}

// --- cold start: new versus established products, and regions (one launched later) --------

function segmentLines(f, dim) {
  return segmentsOf(dim).map((seg) => {
    const y = readable(f, seg.s);
    const first = y.findIndex((v) => v !== null);
    const value = plain(shown(seg.value));
    const name = first > 0 ? `${value} (from ${DAYS[first].slice(5)})` : value;
    return { x: DAYS, y, name, mode: "lines", line: { width: 2 }, hovertemplate: `${value} %{y:.2f}%<extra></extra>` };
  });
}

function drawColdStart() {
  const feature = $("cold-feature").value;
  const f = FEATURE.get(feature);
  if (DIMS.includes("product_age")) {
    Plotly.react("cold-age-chart", segmentLines(f, "product_age"),
      layout(`${plain(feature)}: new (first seen < 30 days) and established products`, "coverage (%)"), PLOT);
  }
  if (DIMS.includes("region")) {
    Plotly.react("cold-region-chart", segmentLines(f, "region"), layout(`${plain(feature)} per region`, "coverage (%)"), PLOT);
  }
}

// --- ranker: daily NDCG per segment, SHAP shares of the scoring model ----------------------

function drawNdcg() {
  const dim = $("ndcg-dim").value;
  const metric = $("ndcg-metric").value;
  const name = metric === "ndcg4" ? "NDCG@4" : "NDCG@8";
  const lines = new Map();
  for (const row of DATA.ndcg.rows) {
    const [segmentDim, segmentValue] = DATA.ndcg.segments[row.s];
    if (segmentDim !== dim && segmentDim !== "all") continue;
    const key = describe(segmentDim, segmentValue);
    if (!lines.has(key)) lines.set(key, { x: [], y: [], customdata: [], name: key, mode: "lines+markers",
      line: segmentDim === "all" ? { color: "#111", width: 3 } : { width: 1.5 },
      hovertemplate: `${key} %{y:.4f} (%{customdata})<extra></extra>` });
    const line = lines.get(key);
    line.x.push(row.ds);
    line.y.push(row[metric]);
    line.customdata.push(`${row.queries_evaluated.toLocaleString()} queries`);
  }
  Plotly.react("ndcg-chart", [...lines.values()], layout(`Daily ${name} of the reference ranker per ${plain(dim)}`, name), PLOT);
}

// The chosen feature's daily share of attribution in the chosen segment, beside its coverage there.
const shap = { feature: $("shap-feature"), dim: $("shap-dim"), value: $("shap-value") };

function drawShap() {
  const f = FEATURE.get(shap.feature.value);
  const dim = shap.dim.value;
  const s = SEGMENT.get(dim + "\u0000" + shap.value.value);
  const where = describe(dim, shap.value.value);
  const model = DATA.shap[shap.feature.value] || [];
  const traces = [
    { x: DAYS, y: share("shap_share", f, s), name: `share of mean |SHAP|, ${where}`, mode: "lines+markers",
      line: { color: "#9467bd", width: 2.5 }, hovertemplate: "SHAP share %{y:.2f}%<extra></extra>" },
    { x: model.map((row) => row[0]), y: model.map((row) => 100 * row[1]), name: "share in the model's training data",
      mode: "lines", line: { color: "#9467bd", width: 1, dash: "dot", shape: "hv" },
      hovertemplate: "in training %{y:.2f}%<extra></extra>" },
    { x: DAYS, y: share("coverage", f, s), name: `coverage, ${where}`, yaxis: "y2", mode: "lines+markers",
      line: { color: "#111", width: 1.5, dash: "dash" }, hovertemplate: "coverage %{y:.2f}%<extra></extra>" },
  ];
  Plotly.react("shap-chart", traces, layout(`${plain(shap.feature.value)} in ${where}: attribution and coverage`,
    "share of mean |SHAP| (%)", { yaxis2: { title: { text: "coverage (%)" }, overlaying: "y", side: "right" },
      margin: { t: 48, r: 70, b: 40, l: 60 } }), PLOT);
}

function shapValues() {
  fill(shap.value, segmentsOf(shap.dim.value).map((seg) => seg.value), shap.value.value);
}

// --- experiment grid and sampling study ---------------------------------------------------

function drawGrid() {
  const mode = $("grid-mode").value;
  const lines = new Map();
  for (const row of DATA.grid.filter((r) => r.mode === mode)) {
    if (!lines.has(row.feature)) lines.set(row.feature, { x: [], y: [], name: plain(row.feature), mode: "lines+markers",
      hovertemplate: `${plain(row.feature)}: %{x:.0f}% removed, ΔNDCG@8 %{y:.4f}<extra></extra>` });
    lines.get(row.feature).x.push(100 * row.reduction);
    lines.get(row.feature).y.push(row.d_ndcg8);
  }
  Plotly.react("grid-chart", [...lines.values()], layout(`ΔNDCG@8 against coverage removed (mode: ${mode})`, "ΔNDCG@8",
    { xaxis: { title: { text: "coverage removed (% of covered rows)" } }, hovermode: "closest" }), PLOT);
}

function drawStudy() {
  const cost = $("study-cost").value;
  const groups = new Map();
  for (const row of DATA.study) {
    const key = row.strategy === "windows" ? `windows, ${row.events_per_window.toLocaleString()} events each` : `${row.strategy} sample`;
    if (!groups.has(key)) groups.set(key, { x: [], y: [], name: key, mode: row.strategy === "windows" ? "lines+markers" : "markers",
      hovertemplate: `${key}: %{x:,} → %{y:.3f} points<extra></extra>` });
    groups.get(key).x.push(row[cost]);
    groups.get(key).y.push(row.max_error_points);
  }
  Plotly.react("study-chart", [...groups.values()], layout("Largest coverage error of any feature against its cost",
    "largest |sampled − full-day coverage| (points)",
    { xaxis: { type: "log", title: { text: cost === "rows_read" ? "rows read" : "seconds" } }, yaxis: { type: "log" }, hovermode: "closest" }), PLOT);
}

// --- wiring -------------------------------------------------------------------------------

fill(trend.feature, CUBE.features, DATA.start.feature);
fill(trend.dim, DIMS, DATA.start.segment_dim);
trendValues();
trend.value.value = DATA.start.segment_value;
for (const select of Object.values(trend)) select.addEventListener("change", onTrendChange);
trend.dim.addEventListener("change", () => { trendValues(); onTrendChange(); });
window.addEventListener("hashchange", followHash);
drawTrend();
followHash();

fill($("heatmap-dim"), Object.keys(DATA.heatmap), DATA.heatmap_dim);
$("heatmap-dim").addEventListener("change", drawHeatmap);
drawHeatmap();
$("heatmap-chart").on("plotly_click", heatmapClick);

if ($("cold-feature")) {
  fill($("cold-feature"), [...DATA.cold_start, ...CUBE.features.filter((f) => !DATA.cold_start.includes(f))], DATA.cold_start[0]);
  $("cold-feature").addEventListener("change", drawColdStart);
  drawColdStart();
}
if (DATA.ndcg) {
  fill($("ndcg-dim"), [...new Set(DATA.ndcg.segments.map(([dim]) => dim))].filter((d) => d !== "all").concat(["all"]), null);
  for (const id of ["ndcg-dim", "ndcg-metric"]) $(id).addEventListener("change", drawNdcg);
  drawNdcg();
}
if (DATA.shap) {
  fill(shap.feature, CUBE.features, DATA.start.feature);
  fill(shap.dim, DIMS, DATA.start.segment_dim);
  shapValues();
  shap.value.value = DATA.start.segment_value;
  for (const select of [shap.feature, shap.value]) select.addEventListener("change", drawShap);
  shap.dim.addEventListener("change", () => { shapValues(); drawShap(); });
  drawShap();
}
if (DATA.grid) {
  fill($("grid-mode"), [...new Set(DATA.grid.map((r) => r.mode))], "retrain");
  $("grid-mode").addEventListener("change", drawGrid);
  drawGrid();
}
if (DATA.study) {
  $("study-cost").addEventListener("change", drawStudy);
  drawStudy();
}
