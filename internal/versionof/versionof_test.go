package versionof

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/version"
)

func TestHelmOutput(t *testing.T) {
	tests := []struct{ out, raw, want string }{
		{"v3.22.0+gabc1234\n", "3.22.0+gabc1234", "3.22.0+gabc1234"},
		{"v4.3.1+g123\n", "4.3.1+g123", "4.3.1+g123"},
		{"v4.3\n", "4.3", "4.3.0"},
		{"v4.0.0-rc.1+gdead\n", "4.0.0-rc.1+gdead", "4.0.0-rc.1+gdead"},
		{"Client: v2.16.1+gbbdfe5e\n", "2.16.1+gbbdfe5e", "2.16.1+gbbdfe5e"},
		{`version.BuildInfo{Version:"v3.7.2", GitCommit:"663a896f"}`, "3.7.2", "3.7.2"},
	}
	for _, tt := range tests {
		raw, v, err := HelmOutput([]byte(tt.out))
		if err != nil || raw != tt.raw || v.String() != tt.want {
			t.Errorf("HelmOutput(%q) = %q, %v, %v; want %q, %s", tt.out, raw, v, err, tt.raw, tt.want)
		}
	}
	if _, _, err := HelmOutput([]byte("helm: command not found\n")); !errors.Is(err, ErrNoVersion) {
		t.Errorf("no version: err %v, want ErrNoVersion", err)
	}
	if raw, _, err := HelmOutput([]byte("v99999999999999999999.0.0")); err == nil || raw != "99999999999999999999.0.0" {
		t.Errorf("a version semver refuses: raw %q, err %v", raw, err)
	}
}

func TestServer(t *testing.T) {
	tests := []struct {
		info version.Info
		want string
	}{
		{version.Info{GitVersion: "v1.29.3-eks-4f4795d"}, "1.29.3"},
		{version.Info{GitVersion: "v1.28.5-gke.1217000"}, "1.28.5"},
		{version.Info{GitVersion: "v1.30.2+k3s1"}, "1.30.2"},
		{version.Info{GitVersion: "v1.27.6+f67aeb3"}, "1.27.6"},
		{version.Info{GitVersion: "v1.22.17"}, "1.22.17"},
		{version.Info{GitVersion: "v1.23.0-alpha.1"}, "1.23.0"},
		{version.Info{GitVersion: "weird", Major: "1", Minor: "26+"}, "1.26.0"},
	}
	for _, tt := range tests {
		got, err := Server(&tt.info)
		if err != nil || got.String() != tt.want {
			t.Errorf("Server(%q) = %v, %v; want %s", tt.info.GitVersion, got, err, tt.want)
		}
	}
	if _, err := Server(&version.Info{GitVersion: "weird", Major: "x"}); err == nil {
		t.Error("Server(unparseable) = nil error")
	}
}
