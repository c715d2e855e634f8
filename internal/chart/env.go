package chart

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// EnvValue is one environment variable of a rendered container as the
// kubelet would set it from the release's own objects.
type EnvValue struct {
	Name, Value string
	// From names where the value comes from when not written in the
	// container: "ConfigMap NAME key KEY", "Secret NAME key KEY", or
	// "ConfigMap NAME" / "Secret NAME" for envFrom. "" for a value.
	From string
	// Secret is true for a value read from a Secret: it is never printed.
	Secret bool
}

// EnvSources are the data of the ConfigMaps and Secrets a rendering holds,
// decoded once, to read its containers' environments (ContainerEnv).
type EnvSources struct {
	configMaps, secrets map[string]map[string]string
}

// EnvSources decodes the rendering's ConfigMaps and Secrets.
func (r *Rendering) EnvSources() *EnvSources {
	return &EnvSources{configMaps: r.configMaps(), secrets: r.secrets()}
}

// ContainerEnv returns the environment of container c as the kubelet
// sets it from objects the release renders (https://kubernetes.io/docs/tasks/inject-data-application/define-environment-variable-container/,
// https://kubernetes.io/docs/concepts/configuration/secret/#using-secrets-as-environment-variables):
// envFrom's ConfigMaps and Secrets in order, each key with its prefix, a
// later source over an earlier one; then env, over envFrom, each value
// written or read by configMapKeyRef or secretKeyRef. A Secret's data is
// base64-decoded, its stringData taken over data, as the API server
// does. A reference to an object the release does not render is left
// out (it is the cluster's, not the chart's); fieldRef and
// resourceFieldRef are left out. In order of first appearance.
func (r *EnvSources) ContainerEnv(c corev1.Container) []EnvValue {
	var out []EnvValue
	at := map[string]int{}
	set := func(e EnvValue) {
		if i, ok := at[e.Name]; ok {
			out[i] = e
			return
		}
		at[e.Name] = len(out)
		out = append(out, e)
	}
	for _, from := range c.EnvFrom {
		switch {
		case from.ConfigMapRef != nil:
			if data, ok := r.configMaps[unmarked(from.ConfigMapRef.Name)]; ok {
				for _, k := range sortedKeys(data) {
					set(EnvValue{Name: from.Prefix + k, Value: data[k], From: "ConfigMap " + from.ConfigMapRef.Name})
				}
			}
		case from.SecretRef != nil:
			if data, ok := r.secrets[unmarked(from.SecretRef.Name)]; ok {
				for _, k := range sortedKeys(data) {
					set(EnvValue{Name: from.Prefix + k, Value: data[k], From: "Secret " + from.SecretRef.Name, Secret: true})
				}
			}
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			set(EnvValue{Name: e.Name, Value: e.Value})
		case e.ValueFrom.ConfigMapKeyRef != nil:
			ref := e.ValueFrom.ConfigMapKeyRef
			if v, ok := r.configMaps[unmarked(ref.Name)][ref.Key]; ok {
				set(EnvValue{Name: e.Name, Value: v, From: "ConfigMap " + ref.Name + " key " + ref.Key})
			}
		case e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			if v, ok := r.secrets[unmarked(ref.Name)][ref.Key]; ok {
				set(EnvValue{Name: e.Name, Value: v, From: "Secret " + ref.Name + " key " + ref.Key, Secret: true})
			}
		}
	}
	return out
}

// unmarked is name without the markers of a provenance render.
func unmarked(name string) string { return markerPattern.ReplaceAllString(name, "") }

// secrets returns the data of every rendered Secret by name (markers
// removed), objects then hooks, a later one of a name over an earlier:
// data decoded from base64, stringData over it.
func (r *Rendering) secrets() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, objs := range [][]Object{r.Objects, r.Hooks} {
		for _, o := range objs {
			if o.Kind != "Secret" {
				continue
			}
			if _, data, err := DecodeSecret(o.Doc); err == nil {
				out[unmarked(o.Name)] = data
			}
		}
	}
	return out
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// DecodeSecret decodes a rendered Secret (YAML) and its data as the API
// server stores it: data decoded from base64, stringData over it.
func DecodeSecret(doc string) (*corev1.Secret, map[string]string, error) {
	var s corev1.Secret
	if err := yaml.Unmarshal([]byte(doc), &s); err != nil {
		return nil, nil, err
	}
	data := make(map[string]string, len(s.Data)+len(s.StringData))
	for k, v := range s.Data {
		data[k] = string(v)
	}
	for k, v := range s.StringData {
		data[k] = v
	}
	return &s, data, nil
}
