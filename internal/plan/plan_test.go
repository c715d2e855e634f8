package plan

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestNewDefaultsAndDerivation(t *testing.T) {
	in, err := New(Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if in.RuntimeName != DefaultRuntimeName || in.Namespace != DefaultNamespace || in.ReleaseName != DefaultReleaseName {
		t.Errorf("defaults: %+v", in)
	}
	if in.AccessMode != AccessTunnel || in.Values != nil || in.RenderValues == nil {
		t.Errorf("no values: mode %q values %v render %v", in.AccessMode, in.Values, in.RenderValues)
	}

	in, err = New(Flags{SetValues: []string{"global.runtime.name=rt1", "global.runtime.httpRoute.enabled=true", "global.runtime.httpRoute.hostnames[0]=h.example"}})
	if err != nil {
		t.Fatal(err)
	}
	if in.RuntimeName != "rt1" || in.AccessMode != AccessServiceMesh || !in.HTTPRoute || in.IngressURL != "https://h.example" {
		t.Errorf("derived: %+v", in)
	}

	in, err = New(Flags{RuntimeName: "explicit", SetValues: []string{"global.runtime.name=rt1"}, Shortcuts: Shortcuts{IngressHost: "a.example"}})
	if err != nil {
		t.Fatal(err)
	}
	if in.RuntimeName != "explicit" || in.AccessMode != AccessIngress || in.IngressHost != "a.example" {
		t.Errorf("flags win: %+v", in)
	}
	if _, err := New(Flags{Shortcuts: Shortcuts{AccessMode: "bogus"}}); err == nil {
		t.Error("unknown access mode accepted")
	}
}

// TestNewDerivesTheHookSwitches: installer.skipValidation,
// installer.skipUsageValidation and a plain user token, field by field.
func TestNewDerivesTheHookSwitches(t *testing.T) {
	for _, c := range []struct {
		sets                   []string
		skipV, skipU, plainTok bool
	}{
		{nil, false, false, false},
		{[]string{"installer.skipValidation=true"}, true, false, false},
		{[]string{"installer.skipUsageValidation=true"}, false, true, false},
		{[]string{"installer.skipValidation=false", "global.codefresh.userToken.token=abc"}, false, false, true},
		{[]string{"global.codefresh.userToken.secretKeyRef.name=s", "global.codefresh.userToken.secretKeyRef.key=token"}, false, false, false},
	} {
		in, err := New(Flags{SetValues: c.sets})
		if err != nil {
			t.Fatal(err)
		}
		if in.SkipValidation != c.skipV || in.SkipUsageValidation != c.skipU || in.PlainUserToken != c.plainTok {
			t.Errorf("%v: skipValidation %v skipUsageValidation %v plain token %v; want %v %v %v",
				c.sets, in.SkipValidation, in.SkipUsageValidation, in.PlainUserToken, c.skipV, c.skipU, c.plainTok)
		}
	}
}

// TestNewDerivesTheRuntimeShape: namespaced mode and the CRDs the values
// leave on (the multi-runtime rule), field by field.
func TestNewDerivesTheRuntimeShape(t *testing.T) {
	for _, c := range []struct {
		sets       []string
		single     bool
		installCRD bool
	}{
		{nil, false, true},
		{[]string{"global.runtime.singleNamespace=true"}, true, true},
		{[]string{"global.runtime.singleNamespace=true", "argo-cd.crds.install=false", "argo-workflows.crds.install=false", "gitops-operator.crds.install=false"}, true, false},
		{[]string{"argo-cd.crds.install=false", "argo-workflows.crds.install=false"}, false, true},
		{[]string{"argo-cd.enabled=false", "argo-workflows.crds.install=false", "gitops-operator.crds.install=false"}, false, false},
	} {
		in, err := New(Flags{SetValues: c.sets})
		if err != nil {
			t.Fatal(err)
		}
		if in.SingleNamespace != c.single || in.InstallsCRDs != c.installCRD {
			t.Errorf("%v: singleNamespace %v installs CRDs %v; want %v %v", c.sets, in.SingleNamespace, in.InstallsCRDs, c.single, c.installCRD)
		}
	}
}

// TestNewDerivesThePlatformInputs: the platform URL (default
// https://g.codefresh.io), account and token Secret reference.
func TestNewDerivesThePlatformInputs(t *testing.T) {
	in, err := New(Flags{})
	if err != nil {
		t.Fatal(err)
	}
	if in.PlatformURL != "https://g.codefresh.io" || in.AccountID != "" || in.UserTokenSecret != "" {
		t.Errorf("defaults: url %q account %q secret %q", in.PlatformURL, in.AccountID, in.UserTokenSecret)
	}
	in, err = New(Flags{SetValues: []string{"global.codefresh.url=https://cf.example", "global.codefresh.accountId=acc1",
		"global.codefresh.userToken.secretKeyRef.name=tok", "global.codefresh.userToken.secretKeyRef.key=token"}})
	if err != nil {
		t.Fatal(err)
	}
	if in.PlatformURL != "https://cf.example" || in.AccountID != "acc1" || in.UserTokenSecret != "tok" || in.UserTokenKey != "token" {
		t.Errorf("derived: url %q account %q secret %q key %q", in.PlatformURL, in.AccountID, in.UserTokenSecret, in.UserTokenKey)
	}
}

// TestNewDerivesTheCheckInputs: every value a check reads, field by field,
// with the chart's default when the values leave it unset.
func TestNewDerivesTheCheckInputs(t *testing.T) {
	for _, c := range []struct {
		name string
		sets []string
		got  func(Install) any
		want any
	}{
		{"protocol default", nil, func(in Install) any { return in.IngressProtocol }, "https"},
		{"protocol", []string{"global.runtime.ingress.protocol=http"}, func(in Install) any { return in.IngressProtocol }, "http"},
		{"tunnel server default", nil, func(in Install) any { return in.TunnelServer }, "register-tunnels.cf-cd.com"},
		{"tunnel server", []string{"tunnel-client.tunnelServer.host=t.example:8443"}, func(in Install) any { return in.TunnelServer }, "t.example:8443"},
		{"argo-cd auth default", nil, func(in Install) any { return in.ArgoCDAuthType + " " + in.ArgoCDUser }, "password admin"},
		{"argo-cd auth", []string{"global.integrations.argo-cd.server.auth.type=token", "global.integrations.argo-cd.server.auth.username=bot"},
			func(in Install) any { return in.ArgoCDAuthType + " " + in.ArgoCDUser }, "token bot"},
		{"no user token", nil, func(in Install) any { return in.UserToken.Reveal() }, ""},
		{"user token", []string{"global.codefresh.userToken.token=tok-1"}, func(in Install) any { return in.UserToken.Reveal() }, "tok-1"},
		{"no annotations", nil, func(in Install) any { return in.IngressAnnotations }, map[string]string(nil)},
		{"annotations", []string{"global.runtime.ingress.annotations.a=x", "global.runtime.ingress.annotations.n=3"},
			func(in Install) any { return in.IngressAnnotations }, map[string]string{"a": "x", "n": "3"}},
		{"no tls", nil, func(in Install) any { return in.IngressTLS }, []IngressTLS(nil)},
		{"tls", []string{"global.runtime.ingress.tls[0].secretName=a", "global.runtime.ingress.tls[1].hosts[0]=x",
			"global.runtime.ingress.tls[2].secretName=b", "global.runtime.ingress.tls[2].hosts[0]=h1", "global.runtime.ingress.tls[2].hosts[1]=h2",
			"global.runtime.ingress.tls[3].secretName=c", "global.runtime.ingress.tls[3].hosts[0]=1"},
			func(in Install) any { return in.IngressTLS },
			[]IngressTLS{{SecretName: "a"}, {SecretName: "b", Hosts: []string{"h1", "h2"}}, {SecretName: "c", Hosts: []string{}}}},
		{"no image registry", nil, func(in Install) any { return in.ImageRegistry }, ""},
		{"image registry", []string{"global.imageRegistry=mirror.example"}, func(in Install) any { return in.ImageRegistry }, "mirror.example"},
		{"no proxy", nil, func(in Install) any { return in.HTTPProxy + in.HTTPSProxy + in.NoProxy }, ""},
		{"proxy", []string{"global.httpProxy=http://p:3128", "global.httpsProxy=http://p:3129", "global.noProxy=.svc"},
			func(in Install) any { return in.HTTPProxy + " " + in.HTTPSProxy + " " + in.NoProxy }, "http://p:3128 http://p:3129 .svc"},
		{"no platform CA", nil, func(in Install) any { return in.PlatformCA }, false},
		{"platform CA secret", []string{"global.codefresh.tls.caCerts.secret.create=true"}, func(in Install) any { return in.PlatformCA }, true},
		{"platform CA reference", []string{"global.codefresh.tls.caCerts.secretKeyRef.name=ca"}, func(in Install) any { return in.PlatformCA }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, err := New(Flags{SetValues: c.sets})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.got(in); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%v: got %#v, want %#v", c.sets, got, c.want)
			}
		})
	}
}

// TestSecretNeverPrints: the user token field prints redacted with every
// fmt verb, inside a struct and in JSON; an empty one prints empty.
func TestSecretNeverPrints(t *testing.T) {
	in, err := New(Flags{SetValues: []string{"global.codefresh.userToken.token=tok-secret-1"}})
	if err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(in.UserToken)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprintf("%v", struct{ T Secret }{in.UserToken}), fmt.Sprintf("%+v", []Secret{in.UserToken}), fmt.Sprintf("%#v", in.UserToken), fmt.Sprintf("%s", in.UserToken), string(j)} {
		if strings.Contains(s, "tok-secret-1") {
			t.Errorf("the token prints: %s", s)
		}
	}
	if s := fmt.Sprint(in.UserToken); s != "[redacted]" {
		t.Errorf("set token prints %q, want [redacted]", s)
	}
	if s := fmt.Sprint(Secret("")); s != "" {
		t.Errorf("empty token prints %q", s)
	}
}
