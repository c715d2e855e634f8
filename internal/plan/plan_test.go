package plan

import (
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
