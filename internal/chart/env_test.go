package chart

import (
	"context"
	"testing"
)

// TestContainerEnv reads a container's environment as the kubelet sets
// it from the release's objects: envFrom in order (a prefix, a later
// source over an earlier), env over envFrom, configMapKeyRef and
// secretKeyRef, a Secret's data decoded from base64 and its stringData
// over data, references to objects the release does not render left out.
func TestContainerEnv(t *testing.T) {
	dir := writeChart(t, "{}\n", `apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
      - name: app
        image: registry.example/app:1
        envFrom:
        - configMapRef: {name: base}
        - secretRef: {name: proxy}
        - prefix: CM_
          configMapRef: {name: base}
        - configMapRef: {name: not-rendered}
        env:
        - {name: A, value: from-env}
        - {name: NO_PROXY, valueFrom: {secretKeyRef: {name: proxy, key: NO_PROXY}}}
        - {name: IMG, valueFrom: {configMapKeyRef: {name: base, key: IMG}}}
        - {name: GONE, valueFrom: {secretKeyRef: {name: not-rendered, key: X}}}
`, "templates/objects.yaml", `apiVersion: v1
kind: ConfigMap
metadata: {name: base}
data: {A: from-configmap, B: b, IMG: registry.example/tool:2}
---
apiVersion: v1
kind: Secret
metadata: {name: proxy}
data:
  HTTPS_PROXY: {{ "http://proxy.corp:3128" | b64enc }}
  NO_PROXY: {{ "old" | b64enc }}
  B: {{ "from-secret" | b64enc }}
stringData:
  NO_PROXY: .svc,.cluster.local
`)
	p, _, refs := startDir(t, dir)
	r, err := p.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pods, err := r.Pods()
	if err != nil || len(pods) != 1 {
		t.Fatal(pods, err)
	}
	got := map[string]EnvValue{}
	var order []string
	for _, e := range r.EnvSources().ContainerEnv(pods[0].Spec.Containers[0]) {
		got[e.Name] = e
		order = append(order, e.Name)
	}
	for name, want := range map[string]EnvValue{
		"A":           {Name: "A", Value: "from-env"},
		"B":           {Name: "B", Value: "from-secret", From: "Secret proxy", Secret: true},
		"CM_B":        {Name: "CM_B", Value: "b", From: "ConfigMap base"},
		"HTTPS_PROXY": {Name: "HTTPS_PROXY", Value: "http://proxy.corp:3128", From: "Secret proxy", Secret: true},
		"NO_PROXY":    {Name: "NO_PROXY", Value: ".svc,.cluster.local", From: "Secret proxy key NO_PROXY", Secret: true},
		"IMG":         {Name: "IMG", Value: "registry.example/tool:2", From: "ConfigMap base key IMG"},
	} {
		if got[name] != want {
			t.Errorf("%s: %+v, want %+v", name, got[name], want)
		}
	}
	if _, ok := got["GONE"]; ok {
		t.Error("a key of a Secret the release does not render was read")
	}
	if order[0] != "A" || order[1] != "B" {
		t.Errorf("order %v: envFrom's keys first, in order", order)
	}
	found := false
	for _, ref := range refs {
		found = found || ref.Ref == "registry.example/tool:2" && ref.Field == "env IMG"
	}
	if !found {
		t.Errorf("the image in a ConfigMap read by configMapKeyRef is not among %v", refs)
	}
}
