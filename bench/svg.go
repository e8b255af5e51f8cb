package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// The charts are plain SVG written here: a grouped bar chart and a line
// chart, each with a title, axes, a grid and a legend, readable on
// GitHub's light and dark themes (white background).

// palette is a colour-blind-safe set (Okabe–Ito).
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"}

const (
	chartW = 760
	chartH = 380
	padL   = 70
	padR   = 20
	padT   = 40
	padB   = 90
)

// barSeries is one colour of a grouped bar chart; a value ≤ 0 draws no
// bar (not measured).
type barSeries struct {
	name   string
	values []float64
}

// lineSeries is one line of a line chart: color indexes the palette; a
// series without a name has no legend entry (it shares one).
type lineSeries struct {
	name   string
	color  int
	dashed bool
	points [][2]float64
}

// vmark is a labelled vertical line (a phase boundary).
type vmark struct {
	x     float64
	label string
}

type svgDoc struct{ b strings.Builder }

func newSVG(title string) *svgDoc {
	d := &svgDoc{}
	fmt.Fprintf(&d.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", chartW, chartH, chartW, chartH)
	fmt.Fprintf(&d.b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", chartW, chartH)
	d.text(chartW/2, 22, "middle", 15, "bold", title)
	return d
}

func (d *svgDoc) text(x, y float64, anchor string, size int, weight, s string) {
	fmt.Fprintf(&d.b, `<text x="%.1f" y="%.1f" text-anchor="%s" font-size="%d" font-weight="%s" fill="#222">%s</text>`+"\n", x, y, anchor, size, weight, html.EscapeString(s))
}

func (d *svgDoc) rotated(x, y float64, angle int, anchor, s string) {
	fmt.Fprintf(&d.b, `<text x="%.1f" y="%.1f" text-anchor="%s" transform="rotate(%d %.1f %.1f)" fill="#222">%s</text>`+"\n", x, y, anchor, angle, x, y, html.EscapeString(s))
}

func (d *svgDoc) line(x1, y1, x2, y2 float64, stroke string, width float64, dash string) {
	extra := ""
	if dash != "" {
		extra = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
	}
	fmt.Fprintf(&d.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%.1f"%s/>`+"\n", x1, y1, x2, y2, stroke, width, extra)
}

func (d *svgDoc) legend(names []string, colors []int, dashed []bool) {
	x := float64(padL)
	y := float64(chartH - 14)
	for i, n := range names {
		if n == "" {
			continue
		}
		c := palette[colors[i]%len(palette)]
		dash := ""
		if dashed[i] {
			dash = "5,3"
		}
		d.line(x, y-4, x+18, y-4, c, 4, dash)
		d.text(x+22, y, "start", 12, "normal", n)
		x += 30 + 7*float64(len([]rune(n)))
	}
}

func (d *svgDoc) String() string { return d.b.String() + "</svg>\n" }

// scale maps data to pixels on one axis, linear or log10.
type scale struct {
	lo, hi float64 // data
	p0, p1 float64 // pixels
	log    bool
}

func (s scale) at(v float64) float64 {
	lo, hi := s.lo, s.hi
	if s.log {
		v, lo, hi = math.Log10(math.Max(v, 1e-12)), math.Log10(lo), math.Log10(hi)
	}
	if hi == lo {
		return (s.p0 + s.p1) / 2
	}
	return s.p0 + (v-lo)/(hi-lo)*(s.p1-s.p0)
}

// ticks are the axis labels: powers of ten (and 2, 5 between them when
// few) on a log axis, about six round steps on a linear one.
func (s scale) ticks() []float64 {
	var out []float64
	if s.log {
		for e := math.Floor(math.Log10(s.lo)); e <= math.Ceil(math.Log10(s.hi)); e++ {
			for _, m := range []float64{1, 2, 5} {
				v := m * math.Pow(10, e)
				if v >= s.lo*0.999 && v <= s.hi*1.001 && (m == 1 || math.Log10(s.hi/s.lo) < 3) {
					out = append(out, v)
				}
			}
		}
		return out
	}
	step := niceStep((s.hi - s.lo) / 6)
	for v := math.Ceil(s.lo/step) * step; v <= s.hi+step/1e6; v += step {
		out = append(out, v)
	}
	return out
}

// niceStep rounds a raw step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// axisRange is the [lo, hi] an axis shows for values vals.
func axisRange(vals []float64, log, fromZero bool) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if log && v <= 0 {
			continue
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	if math.IsInf(lo, 1) {
		return 1, 10
	}
	if log {
		return math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)+1e-9))
	}
	if fromZero {
		lo = math.Min(0, lo)
	}
	if hi == lo {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / 6)
	return math.Floor(lo/step) * step, math.Ceil(hi/step) * step
}

func fmtTick(v float64) string {
	switch {
	case v >= 1000 && math.Mod(v, 1000) == 0:
		return fmt.Sprintf("%gk", v/1000)
	case v >= 1:
		return fmt.Sprintf("%g", math.Round(v*100)/100)
	default:
		return fmt.Sprintf("%g", v)
	}
}

// yAxis draws the y grid and labels and the axis title.
func (d *svgDoc) yAxis(y scale, label string) {
	for _, t := range y.ticks() {
		py := y.at(t)
		d.line(padL, py, chartW-padR, py, "#dddddd", 1, "")
		d.text(padL-6, py+4, "end", 11, "normal", fmtTick(t))
	}
	d.line(padL, float64(padT), padL, float64(chartH-padB), "#444", 1, "")
	d.rotated(16, float64(padT+chartH-padB)/2, -90, "middle", label)
}

// barChart draws one group of bars per category.
func barChart(title, yLabel string, categories []string, series []barSeries, log bool) string {
	d := newSVG(title)
	var vals []float64
	for _, s := range series {
		vals = append(vals, s.values...)
	}
	lo, hi := axisRange(vals, log, true)
	y := scale{lo: lo, hi: hi, p0: chartH - padB, p1: padT, log: log}
	d.yAxis(y, yLabel)
	base := float64(chartH - padB)
	groupW := float64(chartW-padL-padR) / float64(max(len(categories), 1))
	barW := groupW * 0.8 / float64(max(len(series), 1))
	for i, c := range categories {
		gx := float64(padL) + groupW*float64(i) + groupW*0.1
		for j, s := range series {
			if i >= len(s.values) || s.values[i] <= 0 {
				continue
			}
			top := y.at(s.values[i])
			fmt.Fprintf(&d.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`+"\n",
				gx+barW*float64(j), top, barW-1, base-top, palette[j%len(palette)], html.EscapeString(s.name), fmtValue(s.values[i]))
			d.text(gx+barW*float64(j)+barW/2, top-3, "middle", 9, "normal", fmtValue(s.values[i]))
		}
		d.text(gx+groupW*0.4, base+16, "middle", 11, "normal", c)
	}
	d.line(padL, base, chartW-padR, base, "#444", 1, "")
	names := make([]string, len(series))
	colors := make([]int, len(series))
	for i, s := range series {
		names[i], colors[i] = s.name, i
	}
	d.legend(names, colors, make([]bool, len(series)))
	return d.String()
}

func fmtValue(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// lineChart draws series of (x, y) points with markers at each point.
func lineChart(title, xLabel, yLabel string, series []lineSeries, logX, logY bool, marks []vmark) string {
	d := newSVG(title)
	var xs, ys []float64
	for _, s := range series {
		for _, p := range s.points {
			xs = append(xs, p[0])
			ys = append(ys, p[1])
		}
	}
	xlo, xhi := axisRange(xs, logX, false)
	if !logX {
		xlo = math.Min(0, xlo)
	}
	ylo, yhi := axisRange(ys, logY, true)
	x := scale{lo: xlo, hi: xhi, p0: padL, p1: chartW - padR, log: logX}
	y := scale{lo: ylo, hi: yhi, p0: chartH - padB, p1: padT, log: logY}
	d.yAxis(y, yLabel)
	base := float64(chartH - padB)
	for _, t := range x.ticks() {
		px := x.at(t)
		d.line(px, base, px, base+4, "#444", 1, "")
		d.text(px, base+16, "middle", 11, "normal", fmtTick(t))
	}
	d.line(padL, base, chartW-padR, base, "#444", 1, "")
	d.text(float64(padL+chartW-padR)/2, base+34, "middle", 12, "normal", xLabel)
	lastLabel := math.Inf(-1)
	for _, m := range marks {
		px := x.at(m.x)
		d.line(px, padT, px, base, "#bbbbbb", 1, "2,3")
		// A phase too close to the last labelled one keeps its line only.
		if px-lastLabel >= 13 {
			d.rotated(px+3, float64(padT+8), 90, "start", m.label)
			lastLabel = px
		}
	}
	names := make([]string, len(series))
	colors := make([]int, len(series))
	dashed := make([]bool, len(series))
	for i, s := range series {
		names[i], colors[i], dashed[i] = s.name, s.color, s.dashed
		c := palette[s.color%len(palette)]
		var pts []string
		for _, p := range s.points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x.at(p[0]), y.at(p[1])))
		}
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="6,4"`
		}
		fmt.Fprintf(&d.b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(pts, " "), c, dash)
		if len(s.points) <= 30 {
			for _, p := range s.points {
				fmt.Fprintf(&d.b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s: %s at %s</title></circle>`+"\n",
					x.at(p[0]), y.at(p[1]), c, html.EscapeString(s.name), fmtValue(p[1]), fmtTick(p[0]))
			}
		}
	}
	d.legend(names, colors, dashed)
	return d.String()
}
