package plan

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzLoad merges two values files as helm -f a -f b does: never a panic, an
// error exactly when a file does not parse, and every non-map value of the
// second file's top level wins.
func FuzzLoad(f *testing.F) {
	f.Add([]byte("global:\n  runtime:\n    name: a\n"), []byte("global:\n  runtime:\n    ingress:\n      enabled: true\n"))
	f.Add([]byte("a: 1\nb: [1,2]\n"), []byte("b: null\nc: {d: e}\n"))
	f.Add([]byte("&a [*a]"), []byte("x: !!binary AAAA"))
	f.Add([]byte("{"), []byte(""))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		if len(a) > 1<<16 || len(b) > 1<<16 {
			return
		}
		dir := t.TempDir()
		pa, pb := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
		if err := os.WriteFile(pa, a, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(pb, b, 0o600); err != nil {
			t.Fatal(err)
		}
		merged, err := Load(context.Background(), []string{pa, pb}, nil, nil)
		_, errA := Load(context.Background(), []string{pa}, nil, nil)
		vb, errB := Load(context.Background(), []string{pb}, nil, nil)
		if (err != nil) != (errA != nil || errB != nil) {
			t.Fatalf("merged err %v, alone %v / %v", err, errA, errB)
		}
		if err != nil {
			return
		}
		for k, v := range vb {
			if _, isMap := v.(map[string]any); isMap {
				continue
			}
			if !reflect.DeepEqual(merged[k], v) {
				t.Fatalf("key %q: merged %v, want the second file's %v", k, merged[k], v)
			}
		}
	})
}

// FuzzSet applies --set expressions through Helm's strvals: never a panic,
// and the same expression gives the same values twice.
func FuzzSet(f *testing.F) {
	for _, s := range []string{"a=b", "global.runtime.ingress.hosts[0]=x.example.com", "list={p,q}", `a\.b=c`, "a[99999]=x", "a=", "=b", "a.b.c[0].d=1,e=f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		if len(expr) > 4096 {
			return
		}
		v1, v2 := map[string]any{}, map[string]any{}
		err1 := Set(v1, expr)
		err2 := Set(v2, expr)
		if (err1 == nil) != (err2 == nil) || (err1 == nil && !reflect.DeepEqual(v1, v2)) {
			t.Fatalf("--set %q is not deterministic: %v / %v", expr, err1, err2)
		}
	})
}
