package plan

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Helm semantics: later files merge map by map, lists are replaced, --set
// wins over files and its types are Helm's (true → bool, 3 → int64).
func TestLoadMergesLikeHelm(t *testing.T) {
	a := write(t, "a.yaml", "global:\n  runtime:\n    ingress:\n      enabled: false\n      hosts: [a.example.com, b.example.com]\n      className: nginx\n")
	b := write(t, "b.yaml", "global:\n  runtime:\n    ingress:\n      hosts: [c.example.com]\n  codefresh:\n    accountId: abc\n")
	v, err := Load(context.Background(), []string{a, b}, []string{"global.runtime.ingress.enabled=true", "x.n=3", "list={p,q}"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := List(v, "global.runtime.ingress.hosts"); len(got) != 1 || got[0] != "c.example.com" {
		t.Errorf("hosts = %v, want [c.example.com] (lists are replaced)", got)
	}
	if String(v, "global.runtime.ingress.className") != "nginx" || String(v, "global.codefresh.accountId") != "abc" {
		t.Errorf("maps not merged: %v", v)
	}
	if x, _ := Lookup(v, "global.runtime.ingress.enabled"); x != true {
		t.Errorf("--set enabled=true gave %#v, want bool true", x)
	}
	if x, _ := Lookup(v, "x.n"); x != int64(3) {
		t.Errorf("--set x.n=3 gave %#v, want int64 3", x)
	}
	if l := List(v, "list"); len(l) != 2 {
		t.Errorf("--set list={p,q} gave %v", l)
	}
}

func TestLoadErrorsAreOneLine(t *testing.T) {
	bad := write(t, "bad.yaml", "global:\n  runtime: [\n   oops\n")
	for name, tc := range map[string]struct{ files, sets []string }{
		"file":    {files: []string{bad}},
		"missing": {files: []string{filepath.Join(t.TempDir(), "nope.yaml")}},
		"set":     {sets: []string{"a.b[=1"}},
	} {
		_, err := Load(context.Background(), tc.files, tc.sets, nil)
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %q, want one line", name, err)
		}
	}
}

// https://github.com/codefresh-io/gitops-runtime-helm/blob/b96bc25119ad0f6670414e65d3ab19ed4ec828f5/charts/gitops-runtime/templates/_helpers.tpl#L336-L369 precedence.
func TestDerive(t *testing.T) {
	cases := []struct {
		sets []string
		mode AccessMode
		url  string
	}{
		{nil, AccessTunnel, ""},
		{[]string{"global.runtime.ingress.enabled=true", "global.runtime.ingress.hosts[0]=h.example.com"}, AccessIngress, ""},
		{[]string{"global.runtime.httpRoute.enabled=true", "global.runtime.httpRoute.hostnames[0]=r.example.com"}, AccessServiceMesh, "https://r.example.com"},
		{[]string{"tunnel-client.enabled=false", "global.runtime.ingressUrl=https://m.example.com"}, AccessServiceMesh, "https://m.example.com"},
		{[]string{"global.runtime.ingress.enabled=true", "tunnel-client.enabled=false"}, AccessIngress, ""},
	}
	for _, c := range cases {
		v, err := Load(context.Background(), nil, c.sets, nil)
		if err != nil {
			t.Fatal(err)
		}
		p := Derive(v)
		if p.Mode != c.mode || p.IngressURL != c.url {
			t.Errorf("%v: mode %s url %q, want %s %q", c.sets, p.Mode, p.IngressURL, c.mode, c.url)
		}
		if p.IngressClass != DefaultIngressClass || p.Protocol != "https" || p.ExistingArgoCD {
			t.Errorf("%v: defaults wrong: %+v", c.sets, p)
		}
	}
}

func TestShortcutsOverrideValues(t *testing.T) {
	v, _ := Load(context.Background(), nil, []string{"global.runtime.ingress.enabled=false", "global.runtime.ingress.className=traefik"}, nil)
	if err := ApplyShortcuts(v, Shortcuts{IngressHost: "h.example.com", IngressClass: "nginx", ExistingArgoCD: true, SkipIngressValidation: true}); err != nil {
		t.Fatal(err)
	}
	p := Derive(v)
	if p.Mode != AccessIngress || p.IngressHost != "h.example.com" || p.IngressClass != "nginx" || !p.ExistingArgoCD || !p.SkipIngressValidation {
		t.Errorf("shortcuts not applied: %+v", p)
	}
	v2 := map[string]any{}
	if err := ApplyShortcuts(v2, Shortcuts{IngressURL: "https://x.example.com"}); err != nil {
		t.Fatal(err)
	}
	if p := Derive(v2); p.Mode != AccessServiceMesh || p.IngressURL != "https://x.example.com" {
		t.Errorf("--ingress-url: %+v", p)
	}
	if err := ApplyShortcuts(map[string]any{}, Shortcuts{AccessMode: "bogus"}); err == nil {
		t.Error("bad --access-mode accepted")
	}
}

func TestLoadStdin(t *testing.T) {
	v, err := Load(context.Background(), []string{"-"}, nil, strings.NewReader("global:\n  runtime:\n    name: from-stdin\n"))
	if err != nil || String(v, "global.runtime.name") != "from-stdin" {
		t.Fatalf("Load(-) = %v, %v", v, err)
	}
}

// /dev/zero never ends: the cap stops the read at once with one line.
func TestLoadCapsEndlessFile(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero on this system")
	}
	start := time.Now()
	_, err := Load(context.Background(), []string{"/dev/zero"}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "larger than 10 MiB") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v, want one line saying the cap", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %s", d)
	}
	_, err = Load(context.Background(), []string{"-"}, nil, io.LimitReader(zeros{}, MaxFileSize+10))
	if err == nil || !strings.Contains(err.Error(), "- (stdin) is larger than 10 MiB") {
		t.Fatalf("stdin: err = %v", err)
	}
	if _, err := ReadFile(context.Background(), "-", io.LimitReader(zeros{}, MaxFileSize)); err != nil {
		t.Fatalf("exactly the cap: %v", err)
	}
}

// A FIFO nobody writes to blocks in open(2): the context bounds the wait.
func TestLoadFIFOBoundedByContext(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Load(ctx, []string{p}, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "stopped before it ended") {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %s", d)
	}
	// Release the blocked open so the goroutine ends with the test.
	if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func TestSetStringKeepsStrings(t *testing.T) {
	v, err := Load(context.Background(), nil, []string{"a.n=3", "a.b=true"}, nil, "a.n=007", "a.s=true")
	if err != nil {
		t.Fatal(err)
	}
	if got := Map(v, "a"); got["n"] != "007" || got["s"] != "true" || got["b"] != true {
		t.Errorf("values %v: --set-string must win over --set and keep strings", got)
	}
	if _, err := Load(context.Background(), nil, nil, nil, "a["); err == nil || !strings.Contains(err.Error(), "--set-string") {
		t.Errorf("bad --set-string: %v", err)
	}
}
