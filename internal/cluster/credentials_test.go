//go:build unix

package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func plugin(t *testing.T, script string) *rest.Config {
	t.Helper()
	p := filepath.Join(t.TempDir(), "plugin")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return &rest.Config{Host: "https://127.0.0.1:6443", ExecProvider: &clientcmdapi.ExecConfig{
		APIVersion: "client.authentication.k8s.io/v1", Command: p, InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		Env: []clientcmdapi.ExecEnvVar{{Name: "EXTRA", Value: "x"}},
	}}
}

func TestResolveExecCredentialsToken(t *testing.T) {
	cfg := plugin(t, `case "$KUBERNETES_EXEC_INFO" in *'"interactive":false'*) ;; *) exit 9;; esac
[ "$EXTRA" = x ] || exit 8
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-123"}}'`)
	got, err := ResolveExecCredentials(context.Background(), cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	if got.BearerToken != "tok-123" || got.ExecProvider != nil {
		t.Fatalf("config = token %q exec %v", got.BearerToken, got.ExecProvider)
	}
}

func TestResolveExecCredentialsRejects(t *testing.T) {
	for name, script := range map[string]string{
		"wrong version": `echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}}'`,
		"no status":     `echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"}'`,
		"garbage":       `echo hello`,
		"exit 1":        `echo 'token expired, run aws sso login' >&2; exit 1`,
		"flood":         `yes`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ResolveExecCredentials(context.Background(), plugin(t, script), false)
			var ce *CredentialError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a CredentialError", err)
			}
			if name == "exit 1" && !strings.Contains(err.Error(), "run aws sso login") {
				t.Errorf("err = %v, want the plugin's last stderr line", err)
			}
		})
	}
}

// A plugin that never answers is stopped with the context, with its children.
func TestResolveExecCredentialsHang(t *testing.T) {
	cfg := plugin(t, "sleep 300 & sleep 300\n")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := ResolveExecCredentials(ctx, cfg, false)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %s", d)
	}
}

func TestResolveExecCredentialsNoExec(t *testing.T) {
	cfg := &rest.Config{Host: "h", BearerToken: "b"}
	if got, err := ResolveExecCredentials(context.Background(), cfg, false); err != nil || got != cfg {
		t.Fatalf("got %v, %v", got, err)
	}
}

// A token given otherwise wins over the plugin, which is not run (as in
// client-go).
func TestResolveExecCredentialsTokenWins(t *testing.T) {
	cfg := plugin(t, "exit 1\n")
	cfg.BearerToken = "given"
	got, err := ResolveExecCredentials(context.Background(), cfg, false)
	if err != nil || got.BearerToken != "given" || got.ExecProvider != nil {
		t.Fatalf("got token %q exec %v, err %v", got.BearerToken, got.ExecProvider, err)
	}
}
