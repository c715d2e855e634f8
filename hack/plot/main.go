// Command plot draws make bench's size sweep (the sweep.json hack/bench
// writes) as two SVG charts with gonum.org/v1/plot: wall time against the
// number of nodes, for the plugin runs and the two raw floors, and peak RSS
// of the plugin runs against the number of nodes.
//
// It is a module of its own so that the plugin's go.mod carries no plotting
// dependencies:
//
//	go -C hack/plot run . -in bench/sweep.json -wall bench/sweep.svg -rss bench/sweep-rss.svg
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Sweep is the part of hack/bench's sweep.json this program reads.
type Sweep struct {
	// Caption is the date and machine line.
	Caption string `json:"caption"`
	// Nodes is the number of nodes at each size, in order.
	Nodes []float64 `json:"nodes"`
	// Wall is the median wall time in seconds of each series at each size.
	Wall []Line `json:"wall"`
	// RSS is the peak RSS in MiB of each plugin series at each size.
	RSS []Line `json:"rss"`
}

// Line is one series: a value per size (0 or absent: not measured).
type Line struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
}

func main() {
	in := flag.String("in", "bench/sweep.json", "the sweep written by hack/bench")
	wall := flag.String("wall", "bench/sweep.svg", "wall-time chart to write (.svg or .png)")
	rss := flag.String("rss", "bench/sweep-rss.svg", "peak-RSS chart to write (.svg or .png; empty: none)")
	flag.Parse()
	if err := run(*in, *wall, *rss); err != nil {
		fmt.Fprintln(os.Stderr, "plot:", err)
		os.Exit(1)
	}
}

func run(in, wall, rss string) error {
	data, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var s Sweep
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if len(s.Nodes) == 0 {
		return fmt.Errorf("%s: no sizes", in)
	}
	if wall != "" {
		if err := draw(s, s.Wall, "Wall time (median) against cluster size", "wall time (s)", wall); err != nil {
			return err
		}
	}
	if rss != "" {
		if err := draw(s, s.RSS, "Peak RSS of the plugin against cluster size", "peak RSS (MiB)", rss); err != nil {
			return err
		}
	}
	return nil
}

func draw(s Sweep, lines []Line, title, ylabel, out string) error {
	p := plot.New()
	p.Title.Text = title + "\n" + s.Caption
	p.X.Label.Text = "nodes (pods, Services, Deployments and namespaces scaled alike)"
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	var ticks []plot.Tick
	for _, n := range s.Nodes {
		ticks = append(ticks, plot.Tick{Value: n, Label: fmt.Sprintf("%.0f", n)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	var args []any
	for _, l := range lines {
		var pts plotter.XYs
		for i, v := range l.Values {
			if i < len(s.Nodes) && v > 0 {
				pts = append(pts, plotter.XY{X: s.Nodes[i], Y: v})
			}
		}
		if len(pts) == 0 {
			continue
		}
		args = append(args, l.Name, pts)
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return err
	}
	// Some room above the highest point for the legend, and beside the
	// first and last sizes.
	p.Y.Max *= 1.35
	p.Legend.XOffs = vg.Points(12)
	pad := (p.X.Max - p.X.Min) * 0.04
	p.X.Min, p.X.Max = p.X.Min-pad, p.X.Max+pad
	if err := p.Save(8*vg.Inch, 5*vg.Inch, out); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	return nil
}
