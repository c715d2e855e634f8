package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/pkg/apis/clientauthentication"
	"k8s.io/client-go/pkg/apis/clientauthentication/install"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/proc"
)

// MaxCredentialOutput caps what an exec credential plugin may print on
// stdout (an ExecCredential with a token or a certificate chain and key is a
// few KiB): 1 MiB.
const MaxCredentialOutput = 1 << 20

var (
	authScheme = runtime.NewScheme()
	authCodecs = serializer.NewCodecFactory(authScheme)
)

func init() { install.Install(authScheme) }

// CredentialError is an exec credential plugin that did not give credentials:
// it failed, timed out, was interrupted or printed something else.
type CredentialError struct {
	Command string
	Err     error
}

func (e *CredentialError) Error() string {
	return fmt.Sprintf("getting credentials from exec plugin %s: %v", e.Command, e.Err)
}

func (e *CredentialError) Unwrap() error { return e.Err }

// ResolveExecCredentials runs cfg's exec credential plugin (the kubeconfig's
// users[].user.exec) once, under ctx, and returns a copy of cfg that carries
// the credentials it printed (bearer token or client certificate) instead of
// the plugin. cfg without an exec plugin is returned unchanged.
//
// client-go's own exec authenticator runs the plugin with exec.Command and no
// context (k8s.io/client-go/plugin/pkg/client/auth/exec, refreshCredsLocked):
// a plugin that never answers hangs every request, ignores --timeout and
// outlives the process. Here the plugin runs through proc.Run: its own process
// group, killed when ctx ends, stdout capped at MaxCredentialOutput. The
// protocol is client-go's (https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins):
// KUBERNETES_EXEC_INFO carries an ExecCredential of the configured apiVersion
// (with the cluster when provideClusterInfo is set), the reply is decoded
// with client-go's clientauthentication scheme and checked as client-go does.
// interactive says whether stdin is a terminal; as in client-go, the plugin
// then gets the terminal (interactiveMode IfAvailable or Always), in the
// caller's process group so that it can read it.
//
// The credentials are used for the whole run (bounded by --timeout); they are
// not refreshed when they expire.
func ResolveExecCredentials(ctx context.Context, cfg *rest.Config, interactive bool) (*rest.Config, error) {
	ec := cfg.ExecProvider
	if ec == nil {
		return cfg, nil
	}
	// As client-go (exec Authenticator.UpdateTransportConfig): credentials
	// given otherwise (--token, basic auth, a client certificate) win, and
	// the plugin is not run.
	if cfg.BearerToken != "" || cfg.BearerTokenFile != "" || cfg.Username != "" || cfg.Password != "" ||
		((len(cfg.CertData) > 0 || cfg.CertFile != "") && (len(cfg.KeyData) > 0 || cfg.KeyFile != "")) {
		res := rest.CopyConfig(cfg)
		res.ExecProvider = nil
		return res, nil
	}
	cerr := func(err error) error { return &CredentialError{Command: ec.Command, Err: err} }
	gv, err := schema.ParseGroupVersion(ec.APIVersion)
	if err != nil || gv.Group != clientauthentication.GroupName || !authScheme.IsVersionRegistered(gv) {
		return nil, cerr(fmt.Errorf("invalid apiVersion %q", ec.APIVersion))
	}
	switch ec.PluginPolicy.PolicyType {
	case "", clientcmdapi.PluginPolicyAllowAll:
	case clientcmdapi.PluginPolicyDenyAll:
		return nil, cerr(fmt.Errorf("not allowed: policy set to %q", clientcmdapi.PluginPolicyDenyAll))
	default:
		if !allowlisted(ec) {
			return nil, cerr(errors.New("not in the credential plugin allowlist"))
		}
	}
	useTerminal := false
	switch ec.InteractiveMode {
	case clientcmdapi.NeverExecInteractiveMode:
	case clientcmdapi.IfAvailableExecInteractiveMode, "":
		useTerminal = interactive && !ec.StdinUnavailable
	case clientcmdapi.AlwaysExecInteractiveMode:
		if !interactive || ec.StdinUnavailable {
			return nil, cerr(errors.New("the plugin needs a terminal (interactiveMode Always) and standard input is not one"))
		}
		useTerminal = true
	default:
		return nil, cerr(fmt.Errorf("unknown interactiveMode %q", ec.InteractiveMode))
	}

	cred := &clientauthentication.ExecCredential{Spec: clientauthentication.ExecCredentialSpec{Interactive: useTerminal}}
	if ec.ProvideClusterInfo {
		if cred.Spec.Cluster, err = rest.ConfigToExecCluster(cfg); err != nil {
			return nil, cerr(err)
		}
	}
	info, err := runtime.Encode(authCodecs.LegacyCodec(gv), cred)
	if err != nil {
		return nil, cerr(fmt.Errorf("encoding ExecCredential: %w", err))
	}
	cmd := exec.Command(filepath.Clean(ec.Command), ec.Args...)
	cmd.Env = os.Environ()
	for _, e := range ec.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	cmd.Env = append(cmd.Env, "KUBERNETES_EXEC_INFO="+string(info))
	opts := proc.Options{MaxStdout: MaxCredentialOutput}
	if useTerminal {
		cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
		opts.Foreground = true
	}
	stdout, stderr, err := proc.Run(ctx, cmd, opts)
	if err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			msg := "executable not found"
			if ec.InstallHint != "" {
				msg += " (" + strings.Join(strings.Fields(ec.InstallHint), " ") + ")"
			}
			return nil, cerr(errors.New(msg))
		}
		if ctx.Err() != nil {
			return nil, cerr(fmt.Errorf("no answer before the run ended (--timeout or a signal): %w", context.Cause(ctx)))
		}
		if last := lastLine(string(stderr)); last != "" {
			err = fmt.Errorf("%w: %s", err, last)
		}
		return nil, cerr(err)
	}

	out := &clientauthentication.ExecCredential{}
	_, gvk, err := authCodecs.UniversalDecoder(gv).Decode(stdout, nil, out)
	if err != nil {
		return nil, cerr(fmt.Errorf("decoding its output: %w", err))
	}
	if gvk.Group != gv.Group || gvk.Version != gv.Version {
		return nil, cerr(fmt.Errorf("configured for API version %s, the plugin returned %s", gv, gvk.GroupVersion()))
	}
	st := out.Status
	switch {
	case st == nil:
		return nil, cerr(errors.New("no status in its output"))
	case st.Token == "" && st.ClientCertificateData == "" && st.ClientKeyData == "":
		return nil, cerr(errors.New("no token or certificate/key pair in its output"))
	case (st.ClientCertificateData == "") != (st.ClientKeyData == ""):
		return nil, cerr(errors.New("only a certificate or a key in its output, not both"))
	}
	res := rest.CopyConfig(cfg)
	res.ExecProvider = nil
	if st.Token != "" {
		res.BearerToken, res.BearerTokenFile = st.Token, ""
	}
	if st.ClientCertificateData != "" {
		if _, err := tls.X509KeyPair([]byte(st.ClientCertificateData), []byte(st.ClientKeyData)); err != nil {
			return nil, cerr(fmt.Errorf("parsing its certificate/key: %w", err))
		}
		res.CertData, res.KeyData = []byte(st.ClientCertificateData), []byte(st.ClientKeyData)
		res.CertFile, res.KeyFile = "", ""
	}
	return res, nil
}

// allowlisted applies client-go's allowlist rule: the command as configured
// (cleaned) or as resolved on PATH is named in the list.
func allowlisted(ec *clientcmdapi.ExecConfig) bool {
	if ec.PluginPolicy.PolicyType != clientcmdapi.PluginPolicyAllowlist {
		return false
	}
	cmd := filepath.Clean(ec.Command)
	resolved, _ := exec.LookPath(cmd)
	for _, e := range ec.PluginPolicy.Allowlist {
		if e.Command != "" && (e.Command == cmd || e.Command == resolved) {
			return true
		}
	}
	return false
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// FailingConfig returns a copy of cfg whose every request fails with err
// without being sent: the run then reports, through cluster-reachable, why
// the cluster could not be asked (exit 3), in every output format.
func FailingConfig(cfg *rest.Config, err error) *rest.Config {
	res := rest.CopyConfig(cfg)
	res.ExecProvider = nil
	res.Wrap(func(http.RoundTripper) http.RoundTripper { return failingTransport{err: err} })
	return res
}

type failingTransport struct{ err error }

func (f failingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return nil, f.err
}
