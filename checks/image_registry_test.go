package checks

import (
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/probe"
)

// memTape is a probe.Tape in memory: it keeps every answer, then (replay)
// gives the kept ones and calls nothing.
type memTape struct {
	mu     sync.Mutex
	kept   map[string]probe.Result
	errs   map[string]string
	replay bool
}

func (m *memTape) Probe(key string, do func() (probe.Result, error)) (probe.Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.replay {
		r, ok := m.kept[key]
		if !ok {
			return probe.Result{}, errors.New("not recorded: " + key)
		}
		if e := m.errs[key]; e != "" {
			return r, errors.New(e)
		}
		return r, nil
	}
	r, err := do()
	m.kept[key] = r
	if err != nil {
		m.errs[key] = err.Error()
	}
	return r, err
}

// pushStub pushes a one-layer image for platform to ref.
func pushStub(t *testing.T, ref, platform string) {
	t.Helper()
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := v1.ParsePlatform(platform)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf.OS, cf.Architecture = p.OS, p.Architecture
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatal(err)
	}
}

// TestImageRegistry resolves the chart's images at an in-process OCI
// registry on 127.0.0.1 (go-containerregistry's pkg/registry).
func TestImageRegistry(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	c := imageChartAt(t, host) // every image at the local registry: nothing dials out
	node := `apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/arch: amd64, kubernetes.io/os: linux}}
status: {conditions: [{type: Ready, status: "True"}]}`
	in := imageInputs(t, "global.imageRegistry="+host, "installer.image.repository="+host+"/codefresh/installer")
	t.Run("opt-in", func(t *testing.T) {
		outcome{StatusSkip, []string{"give --registry-check"}}.expect(t, newKit(t, node).with(in).withChart(c).run(ImageRegistry()))
	})
	pushStub(t, host+"/codefresh/app:1.2.3", "linux/amd64")
	pushStub(t, host+"/argoproj/ctrl:v3.7.2", "linux/arm64")
	pushStub(t, host+"/codefresh/op:c0ef368", "linux/amd64")
	pushStub(t, host+"/fixed/exec:v1", "linux/amd64")
	t.Run("a missing installer image and an arm64-only image for amd64 nodes", func(t *testing.T) {
		k := newKit(t, node).with(in).withChart(c)
		k.imageOptions(ImageOptions{RegistryCheck: true})
		r := k.run(ImageRegistry())
		outcome{StatusFail, []string{
			host + "/codefresh/installer:0.30.0: not found",
			host + "/argoproj/ctrl:v3.7.2: platforms linux/arm64, none for the linux/amd64 nodes the pod can land on",
		}}.expect(t, r)
	})
	t.Run("a replay answers as the run did, from what the run recorded", func(t *testing.T) {
		k := newKit(t, node).with(in).withChart(c)
		k.imageOptions(ImageOptions{RegistryCheck: true})
		tape := &memTape{kept: map[string]probe.Result{}, errs: map[string]string{}}
		live := k.env()
		live.Probe.Tape = tape
		want := runThrough(t, ImageRegistry(), live)
		if len(tape.kept) < 4 {
			t.Fatalf("the run recorded %d registry answers", len(tape.kept))
		}
		tape.replay = true
		replay := k.env()
		replay.Probe.Tape, replay.Probe.Offline = tape, errors.New("a replay dials nothing")
		if got := runThrough(t, ImageRegistry(), replay); got.Status != want.Status || got.Message != want.Message {
			t.Errorf("replay %s %q, live %s %q", got.Status, got.Message, want.Status, want.Message)
		}
	})
	t.Run("every image resolves", func(t *testing.T) {
		pushStub(t, host+"/codefresh/installer:0.30.0", "linux/amd64")
		pushStub(t, host+"/argoproj/ctrl:v3.7.2", "linux/amd64")
		k := newKit(t, node).with(in).withChart(c)
		k.imageOptions(ImageOptions{RegistryCheck: true})
		outcome{StatusPass, []string{"images resolve"}}.expect(t, k.run(ImageRegistry()))
	})
}
