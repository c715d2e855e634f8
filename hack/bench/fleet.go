package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// fleetContexts is the size of the fleet run: that many kubeconfig contexts,
// each a user of its own on the one seeded control plane (one machine holds
// one cluster of the bench's size; the fleet's memory is the plugin's).
const fleetContexts = 8

// fleetParallels are the --parallel values the fleet run is timed with.
var fleetParallels = []int{1, 4, fleetContexts}

// fleetSample is one fleet run: --parallel, its sample (wall time, peak RSS
// of the one plugin process) and how many clusters ended in each exit code.
type fleetSample struct {
	parallel int
	sample
	exits map[int]int
}

// runFleet runs the pre-install checks with --all-contexts over a kubeconfig
// of fleetContexts contexts, each its own client-certificate user of this
// control plane, with --parallel p. The merged kubeconfig is written by
// client-go's clientcmd.
func (m *measurer) runFleet(p int, args []string) (fleetSample, error) {
	merged := clientcmdapi.NewConfig()
	for i := 0; i < fleetContexts; i++ {
		name := fmt.Sprintf("bench-fleet-p%d-%d", p, i)
		_, kc, err := m.live.AddUser(name, "system:masters", pluginGroup)
		if err != nil {
			return fleetSample{}, err
		}
		cfg, err := clientcmd.LoadFromFile(kc)
		if err != nil {
			return fleetSample{}, err
		}
		cur := cfg.Contexts[cfg.CurrentContext]
		if cur == nil {
			return fleetSample{}, fmt.Errorf("kubeconfig %s has no current context", kc)
		}
		merged.Clusters[name] = cfg.Clusters[cur.Cluster]
		merged.AuthInfos[name] = cfg.AuthInfos[cur.AuthInfo]
		merged.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	path := filepath.Join(m.dir, fmt.Sprintf("fleet-p%d.kubeconfig", p))
	if err := clientcmd.WriteToFile(*merged, path); err != nil {
		return fleetSample{}, err
	}
	full := append([]string{"--kubeconfig", path, "--all-contexts", "--parallel", strconv.Itoa(p), "-o", "json", "--timeout", "5m"}, args...)
	full = append(full, blackhole...)
	s, stdout, stderr, err := m.execPlugin(full)
	if err != nil {
		return fleetSample{}, fmt.Errorf("plugin --all-contexts: %w\n%s", err, stderr.String())
	}
	if s.code != 0 && s.code != 1 {
		return fleetSample{}, fmt.Errorf("plugin --all-contexts exited %d:\n%s", s.code, stderr.String())
	}
	var doc struct {
		Fleet []struct {
			Context string
			Exit    int
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		return fleetSample{}, fmt.Errorf("plugin --all-contexts output is not JSON: %w", err)
	}
	if len(doc.Fleet) != fleetContexts {
		return fleetSample{}, fmt.Errorf("plugin --all-contexts reported %d clusters, want %d", len(doc.Fleet), fleetContexts)
	}
	f := fleetSample{parallel: p, sample: s, exits: map[int]int{}}
	for _, e := range doc.Fleet {
		f.exits[e.Exit]++
	}
	fmt.Printf("fleet of %d contexts, --parallel %d: %s, peak RSS %d MiB\n", fleetContexts, p, s.wall.Round(time.Millisecond), s.rssKB/1024)
	return f, nil
}

// fleetReport is the fleet paragraph of the results: wall time and peak RSS
// per --parallel, against one single-cluster pre-install run.
func fleetReport(r *results) string {
	if len(r.fleet) == 0 {
		return ""
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Fleet: the pre-install checks with `--all-contexts` over %d contexts (each its own user of this one control plane, so the API server's work grows with the fleet while the plugin's memory is its own), against %s and %s peak RSS for one cluster:\n\n",
		fleetContexts, secs(r.pre.median(wallOf)), mib(r.pre.median(rssOf)))
	b.WriteString("| --parallel | wall | peak RSS | peak anonymous | clusters by exit code |\n|---|---|---|---|---|\n")
	for _, f := range r.fleet {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", f.parallel, secs(f.wall.Seconds()), mib(float64(f.rssKB)), mib(float64(f.anonKB)), exitCounts(f.exits))
	}
	b.WriteString("\n")
	return b.String()
}

// exitCounts says how many clusters ended in each exit code, lowest code
// first: "7 exit 0, 1 exit 3".
func exitCounts(exits map[int]int) string {
	codes := slices.Sorted(maps.Keys(exits))
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%d exit %d", exits[c], c)
	}
	return strings.Join(parts, ", ")
}
