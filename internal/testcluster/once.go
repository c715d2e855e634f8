package testcluster

import (
	"os"
	"sync"
	"testing"
)

// memo computes a path once per test process (a built binary, the repo root)
// and fails every test that asks for it when that failed. When envVar is set
// in the environment its value is used instead and nothing is computed.
type memo struct {
	once sync.Once
	path string
	err  error
}

func (m *memo) get(t testing.TB, envVar string, compute func() (string, error)) string {
	t.Helper()
	if envVar != "" {
		if p := os.Getenv(envVar); p != "" {
			return p
		}
	}
	m.once.Do(func() { m.path, m.err = compute() })
	if m.err != nil {
		t.Fatal(m.err)
	}
	return m.path
}
