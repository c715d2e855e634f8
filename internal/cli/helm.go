package cli

import (
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// helmEnv is the cluster selection Helm hands its plugins. Helm strips its
// own flags (-n/--namespace, --kube-context, --kubeconfig, --kube-token, ...)
// from a plugin's arguments and passes them as environment variables
// (https://helm.sh/docs/topics/plugins/; helm/helm pkg/cli/environment.go).
// HELM_PLUGIN_NAME is set only when Helm runs the binary.
type helmEnv struct {
	// Active is true when the binary runs as a Helm plugin.
	Active bool
	// Namespace is HELM_NAMESPACE: Helm's -n, else the kubeconfig context's
	// namespace, else "default". Helm always sets it, so under Helm the
	// runtime namespace is the one `helm install` would use (README
	// "As a Helm plugin").
	Namespace string
}

// applyHelmEnv reads Helm's plugin environment through get and, when the
// binary runs under Helm, makes it the default of the matching kubectl
// flags of cf. It must run before cf.AddFlags: AddFlags takes the current
// values as the flags' defaults, so a flag given explicitly still wins.
func applyHelmEnv(cf *genericclioptions.ConfigFlags, get func(string) string) helmEnv {
	if get("HELM_PLUGIN_NAME") == "" {
		return helmEnv{}
	}
	setString := func(p *string, env string) {
		if v := get(env); v != "" && p != nil {
			*p = v
		}
	}
	setString(cf.Namespace, "HELM_NAMESPACE")
	setString(cf.Context, "HELM_KUBECONTEXT")
	setString(cf.BearerToken, "HELM_KUBETOKEN")
	setString(cf.APIServer, "HELM_KUBEAPISERVER")
	setString(cf.Impersonate, "HELM_KUBEASUSER")
	setString(cf.CAFile, "HELM_KUBECAFILE")
	setString(cf.TLSServerName, "HELM_KUBETLS_SERVER_NAME")
	if v := get("HELM_KUBEASGROUPS"); v != "" && cf.ImpersonateGroup != nil {
		*cf.ImpersonateGroup = strings.Split(v, ",")
	}
	if b, err := strconv.ParseBool(get("HELM_KUBEINSECURE_SKIP_TLS_VERIFY")); err == nil && b && cf.Insecure != nil {
		*cf.Insecure = true
	}
	// Helm sets KUBECONFIG to its --kubeconfig (one file) or passes the
	// user's through. client-go's loading rules read a path list from the
	// process environment themselves; a single file is made explicit here so
	// that the choice is visible to the command (and testable).
	if kc := get("KUBECONFIG"); kc != "" && !strings.Contains(kc, string(filepath.ListSeparator)) && cf.KubeConfig != nil {
		*cf.KubeConfig = kc
	}
	return helmEnv{Active: true, Namespace: get("HELM_NAMESPACE")}
}
