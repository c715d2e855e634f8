package checks

import (
	"strings"
	"testing"
)

func TestRuntimeName(t *testing.T) {
	for name, want := range map[string]Status{
		"codefresh": StatusPass, "a": StatusPass, "prod2": StatusPass,
		strings.Repeat("a", 38): StatusPass, strings.Repeat("a", 39): StatusFail,
		"": StatusFail, "2prod": StatusFail, "Prod": StatusFail, "my-runtime": StatusFail, "my_rt": StatusFail,
	} {
		env, _ := fakeEnv(t, "v1.30.0")
		env.Inputs.RuntimeName = name
		got, err := runRuntimeName(t.Context(), env)
		if err != nil || got.Status != want {
			t.Errorf("runtime-name(%q) = %s %q, %v; want %s", name, got.Status, got.Message, err, want)
		}
	}
}
