package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/mdblock"
)

// sweep is what bench/sweep.json holds: the figures hack/plot draws.
type sweep struct {
	Caption string      `json:"caption"`
	Nodes   []float64   `json:"nodes"`
	Wall    []sweepLine `json:"wall"`
	RSS     []sweepLine `json:"rss"`
}

type sweepLine struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
}

func sweepFigures(all []*results) sweep {
	sw := sweep{Caption: fmt.Sprintf("%s, %d CPUs, %s; medians of %d runs", time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), memTotal(), len(all[0].pre.samples))}
	names := []string{"pre-install, with the chart", "pre-install, no chart", "--post"}
	for i, name := range names {
		w, m := sweepLine{Name: name}, sweepLine{Name: name}
		for _, r := range all {
			s := r.plugins()[i]
			w.Values = append(w.Values, round(s.median(wallOf), 3))
			m.Values = append(m.Values, round(s.max(rssOf)/1024, 1))
		}
		sw.Wall = append(sw.Wall, w)
		sw.RSS = append(sw.RSS, m)
	}
	cheap, floor := sweepLine{Name: "cheapest-encoding floor (curl)"}, sweepLine{Name: "JSON floor (curl)"}
	for _, r := range all {
		sw.Nodes = append(sw.Nodes, float64(r.scale.Nodes))
		cheap.Values = append(cheap.Values, round(r.cheap.median(wallOf), 3))
		floor.Values = append(floor.Values, round(r.floor.median(wallOf), 3))
	}
	sw.Wall = append(sw.Wall, cheap, floor)
	return sw
}

func round(v float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(v*p+0.5)) / p
}

// drawCharts runs the plotting module (its own go.mod, so that the
// plugin's carries no plotting dependencies) on outDir/sweep.json.
func drawCharts(plotDir, outDir string) error {
	pd, err := filepath.Abs(plotDir)
	if err != nil {
		return err
	}
	od, err := filepath.Abs(outDir)
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "-C", pd, "run", ".", "-in", filepath.Join(od, "sweep.json"),
		"-wall", filepath.Join(od, "sweep.svg"), "-rss", filepath.Join(od, "sweep-rss.svg"))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("drawing the sweep charts (go -C %s run .): %w", plotDir, err)
	}
	fmt.Printf("drew %s and %s\n", filepath.Join(outDir, "sweep.svg"), filepath.Join(outDir, "sweep-rss.svg"))
	return nil
}

// rewriteReadme replaces the body of c.readme's bench block (internal/mdblock:
// <!-- BEGIN GENERATED bench (make bench) --> ... <!-- END GENERATED -->)
// with the sweep, the targets and links to the charts and the results.
func rewriteReadme(c config, all []*results, outDir string, charts bool) error {
	data, err := os.ReadFile(c.readme)
	if err != nil {
		return err
	}
	lines := mdblock.Lines(string(data))
	blocks, err := mdblock.Parse(c.readme, lines)
	if err != nil {
		return err
	}
	var bench []mdblock.Block
	for _, bl := range blocks {
		if bl.Kind == "bench" && bl.Target == "bench" {
			bench = append(bench, bl)
		}
	}
	if len(bench) != 1 {
		return fmt.Errorf("%s: want one %s ... %s block, found %d", c.readme, mdblock.Marker("bench", "", "bench"), mdblock.EndMarker, len(bench))
	}
	rel := func(name string) (string, error) {
		a, err := filepath.Abs(filepath.Dir(c.readme))
		if err != nil {
			return "", err
		}
		o, err := filepath.Abs(filepath.Join(outDir, name))
		if err != nil {
			return "", err
		}
		p, err := filepath.Rel(a, o)
		return filepath.ToSlash(p), err
	}
	results, err := rel(filepath.Base(c.out))
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("<!-- Written by `make bench` (hack/bench -readme): edits between these markers are overwritten. -->\n\n")
	fmt.Fprintf(&b, "%s Medians of %d runs at each size; the seeding, the floors and per-run values are in [`%s`](%s).\n\n", machineLine(all), c.runs, results, results)
	b.WriteString(sweepTable(all))
	b.WriteString("\n")
	if charts {
		for _, f := range []struct{ alt, name string }{{"wall time against cluster size", "sweep.svg"}, {"peak RSS of the plugin against cluster size", "sweep-rss.svg"}} {
			p, err := rel(f.name)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "![%s](%s)\n\n", f.alt, p)
		}
	}
	b.WriteString(targetsTable(all)) // ends with a newline: a blank line before the end marker
	out := mdblock.Rewrite(lines, bench, []string{b.String()})
	return os.WriteFile(c.readme, []byte(strings.Join(out, "\n")), 0o644)
}

func statusLine(st map[string]int) string {
	var parts []string
	for _, k := range []string{"pass", "warn", "fail", "error", "skip"} {
		if st[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", st[k], k))
		}
	}
	return strings.Join(parts, ", ")
}
