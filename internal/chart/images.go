package chart

import (
	"fmt"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	helmchart "helm.sh/helm/v3/pkg/chart"
	rspb "helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Pod is one pod template of a rendered release: the pods a workload
// (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob) or a bare
// Pod will run, hooks included.
type Pod struct {
	Kind, Namespace, Name string
	// Template is the chart template that rendered the workload
	// ("gitops-runtime/charts/argo-cd/templates/...").
	Template string
	// Hook is the workload's helm.sh/hook annotation ("" when it is not a
	// hook).
	Hook string
	// Labels are the pod template's labels.
	Labels map[string]string
	Spec   corev1.PodSpec
}

// Ref names the workload as "Kind/name".
func (p Pod) Ref() string { return p.Kind + "/" + p.Name }

// ServiceAccount is the ServiceAccount the pod runs as, as the API server
// sets it: serviceAccountName, else the deprecated serviceAccount (the
// chart's hooks set that one), else "default"
// (https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#security).
func (p Pod) ServiceAccount() string {
	switch {
	case p.Spec.ServiceAccountName != "":
		return p.Spec.ServiceAccountName
	case p.Spec.DeprecatedServiceAccount != "":
		return p.Spec.DeprecatedServiceAccount
	}
	return "default"
}

// Chart is the chart (or subchart) whose template rendered the pod: the
// last "charts/<name>" of its template path, else the top chart's name.
func (p Pod) Chart(top string) string { return templateChart(p.Template, top) }

func templateChart(template, top string) string {
	parts := strings.Split(template, "/")
	for i := len(parts) - 2; i >= 0; i-- {
		if parts[i] == "charts" {
			return parts[i+1]
		}
	}
	return top
}

// Pods returns the pod templates of the rendered release, hooks last, in
// manifest order.
func (r *Rendering) Pods() ([]Pod, error) {
	var out []Pod
	for _, objs := range [][]Object{r.Objects, r.Hooks} {
		for _, o := range objs {
			p, ok, err := podOf(o)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// podTemplateKinds are the workload kinds whose spec.template is a pod
// template (CronJob's is spec.jobTemplate.spec.template).
var podTemplateKinds = map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true, "ReplicaSet": true, "Job": true, "CronJob": true}

// podOf reads the pod template of a workload object (a bare Pod's own
// metadata and spec).
func podOf(o Object) (Pod, bool, error) {
	var w struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
		Spec     struct {
			Template    corev1.PodTemplateSpec `json:"template"`
			JobTemplate struct {
				Spec struct {
					Template corev1.PodTemplateSpec `json:"template"`
				} `json:"spec"`
			} `json:"jobTemplate"`
		} `json:"spec"`
	}
	var tpl corev1.PodTemplateSpec
	switch {
	case o.Kind == "Pod":
		var p corev1.Pod
		if err := yaml.Unmarshal([]byte(o.Doc), &p); err != nil {
			return Pod{}, false, fmt.Errorf("decoding %s %s: %w", o.Kind, o.Name, err)
		}
		w.Metadata, tpl = p.ObjectMeta, corev1.PodTemplateSpec{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
	case podTemplateKinds[o.Kind]:
		if err := yaml.Unmarshal([]byte(o.Doc), &w); err != nil {
			return Pod{}, false, fmt.Errorf("decoding %s %s: %w", o.Kind, o.Name, err)
		}
		tpl = w.Spec.Template
		if o.Kind == "CronJob" {
			tpl = w.Spec.JobTemplate.Spec.Template
		}
	default:
		return Pod{}, false, nil
	}
	return Pod{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Template: o.Template, Hook: w.Metadata.Annotations["helm.sh/hook"],
		Labels: tpl.Labels, Spec: tpl.Spec}, true, nil
}

// ImageRef is one image reference of a rendered release: a container's or
// init container's image, an image named in a container's args, command or
// environment (Argo Workflows' --executor-image), or an image a chart's
// artifacthub.io/images annotation lists.
type ImageRef struct {
	// Ref is the reference as rendered ("quay.io/codefresh/cap-app-proxy:1.4124.0").
	Ref string
	// Pod indexes the Pods the reference belongs to; -1 for a chart
	// annotation.
	Pod int
	// Container is the container's name; Field says where the reference
	// is: "image", "initContainers image", "args", "command", "env NAME",
	// or "annotation artifacthub.io/images" (Container is then the chart).
	Container, Field string
}

// Pulled reports whether the pod's node pulls the reference to start the
// pod (a container's or init container's image); one named in args or env
// is pulled by the pods the workload starts later.
func (i ImageRef) Pulled() bool { return i.Pod >= 0 && strings.HasSuffix(i.Field, "image") }

// place identifies a reference's position across renderings: its workload,
// container and field, with the markers of a provenance render removed.
func (i ImageRef) place(pods []Pod) string {
	if i.Pod < 0 {
		return "chart " + i.Container + " " + i.Field
	}
	p := pods[i.Pod]
	return p.Kind + "/" + p.Namespace + "/" + p.Name + "/" + i.Container + "/" + i.Field
}

// Images returns the pods of the rendered release and every image
// reference in them (see ImageRef), in manifest order, then those of the
// charts' artifacthub.io/images annotations.
func (r *Rendering) Images() ([]Pod, []ImageRef, error) {
	pods, err := r.Pods()
	if err != nil {
		return nil, nil, err
	}
	src := r.EnvSources()
	var out []ImageRef
	for i, p := range pods {
		add := func(c corev1.Container, init bool) {
			field := "image"
			if init {
				field = "initContainers image"
			}
			if c.Image != "" {
				out = append(out, ImageRef{Ref: c.Image, Pod: i, Container: c.Name, Field: field})
			}
			for _, list := range []struct {
				field string
				args  []string
			}{{"command", c.Command}, {"args", c.Args}} {
				for _, a := range list.args {
					if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
						a = v
					}
					if IsImageReference(a) {
						out = append(out, ImageRef{Ref: strings.TrimSpace(a), Pod: i, Container: c.Name, Field: list.field})
					}
				}
			}
			for _, e := range src.ContainerEnv(c) {
				if !e.Secret && IsImageReference(e.Value) { // a Secret's value is never printed
					out = append(out, ImageRef{Ref: strings.TrimSpace(e.Value), Pod: i, Container: c.Name, Field: "env " + e.Name})
				}
			}
		}
		for _, c := range p.Spec.InitContainers {
			add(c, true)
		}
		for _, c := range p.Spec.Containers {
			add(c, false)
		}
	}
	for _, a := range r.ChartImages {
		out = append(out, ImageRef{Ref: a.Image, Pod: -1, Container: a.Chart, Field: "annotation " + a.Annotation})
	}
	return pods, out, nil
}

// ConfigMapData returns the data of the rendered ConfigMap name (hooks
// included; the markers of a provenance render removed from the names);
// nil when the release renders none of that name. Only that ConfigMap is
// decoded: a rendered release holds large ones (dashboards, scripts).
func (r *Rendering) ConfigMapData(name string) map[string]string {
	var data map[string]string
	r.eachConfigMap(func(n string, o Object) {
		var cm corev1.ConfigMap
		if n == name && yaml.Unmarshal([]byte(o.Doc), &cm) == nil {
			data = cm.Data // a later one of the same name is the one applied last
		}
	})
	return data
}

// configMaps returns the data of every rendered ConfigMap by name.
func (r *Rendering) configMaps() map[string]map[string]string {
	out := map[string]map[string]string{}
	r.eachConfigMap(func(n string, o Object) {
		var cm corev1.ConfigMap
		if yaml.Unmarshal([]byte(o.Doc), &cm) == nil {
			out[n] = cm.Data
		}
	})
	return out
}

// eachConfigMap calls fn with the name (markers removed) and the object of
// every rendered ConfigMap, objects then hooks.
func (r *Rendering) eachConfigMap(fn func(name string, o Object)) {
	for _, objs := range [][]Object{r.Objects, r.Hooks} {
		for _, o := range objs {
			if o.Kind == "ConfigMap" {
				fn(markerPattern.ReplaceAllString(o.Name, ""), o)
			}
		}
	}
}

// IsImageReference reports whether s, as a whole, is an image reference
// that names its registry: a host with a dot or a port, or localhost,
// then a repository, then a tag or a digest
// ("quay.io/argoproj/argoexec:v3.7.2"), valid by go-containerregistry's
// strict parsing. A URL ("https://...") or a host:port is not one.
func IsImageReference(s string) bool {
	// (A provenance render's markers are not part of the reference.)
	s = strings.TrimSpace(markerPattern.ReplaceAllString(s, ""))
	if s == "" || strings.ContainsAny(s, " \t\n=,") || strings.Contains(s, "://") {
		return false
	}
	slash := strings.IndexByte(s, '/')
	if slash <= 0 {
		return false
	}
	host := s[:slash]
	if !strings.ContainsAny(host, ".:") && host != "localhost" {
		return false
	}
	last := s[strings.LastIndexByte(s, '/'):]
	if !strings.Contains(last, ":") && !strings.Contains(s, "@") {
		return false
	}
	_, err := name.ParseReference(s, name.StrictValidation)
	return err == nil
}

// ChartImage is one image a chart's annotation lists.
type ChartImage struct {
	Chart, Annotation, Image string
}

// chartImageAnnotations are the Chart.yaml annotations that list a chart's
// images (Artifact Hub, https://artifacthub.io/docs/topics/annotations/helm/:
// a YAML list of {name, image}).
var chartImageAnnotations = []string{"artifacthub.io/images", "helm.sh/images"}

// chartImages reads the image annotations of c and of every subchart it
// deploys (Helm has dropped the disabled ones from a rendered release's
// chart).
func chartImages(c *helmchart.Chart) []ChartImage {
	if c == nil || c.Metadata == nil {
		return nil
	}
	var out []ChartImage
	for _, key := range chartImageAnnotations {
		text := c.Metadata.Annotations[key]
		if text == "" {
			continue
		}
		var list []struct {
			Image string `json:"image"`
		}
		if yaml.Unmarshal([]byte(text), &list) != nil {
			continue
		}
		for _, e := range list {
			if e.Image != "" {
				out = append(out, ChartImage{Chart: c.Metadata.Name, Annotation: key, Image: e.Image})
			}
		}
	}
	deps := c.Dependencies()
	sort.SliceStable(deps, func(i, j int) bool { return deps[i].Name() < deps[j].Name() })
	for _, d := range deps {
		out = append(out, chartImages(d)...)
	}
	return out
}

// Registry returns the registry host of an image reference as a pull
// resolves it: "docker.io" for Docker Hub names ("nginx:1",
// "index.docker.io/..."), else the reference's first component.
func Registry(ref string) string {
	r, err := name.ParseReference(ref, name.WeakValidation)
	if err != nil {
		if i := strings.IndexByte(ref, '/'); i > 0 {
			return ref[:i]
		}
		return ""
	}
	reg := r.Context().RegistryStr()
	if reg == name.DefaultRegistry {
		return "docker.io"
	}
	return reg
}

// MirrorTarget is where a mirror HOST[/PREFIX] keeps ref, as Codefresh's
// private-registry helper maps an image (replace_registry_in_image,
// https://github.com/codefresh-io/gitops-runtime-helm/blob/6d30d53152ac1648847b0c712d9e8a691d744e1e/scripts/private-registry-utils/private-registry-utils.py#L20-L28):
// the mirror in place of the reference's first path component, the rest
// and the tag or digest kept ("quay.io/codefresh/frpc:cace4c0" at
// "mirror.corp/cf" is "mirror.corp/cf/codefresh/frpc:cace4c0"); a Docker
// Hub name written without a registry loses its first component too
// ("alpine/kubectl:1" is "<mirror>/kubectl:1"), and one with no path gets
// the mirror before it ("nginx:1" is "<mirror>/nginx:1").
func MirrorTarget(ref, mirror string) string {
	mirror = strings.TrimSuffix(mirror, "/")
	if i := strings.IndexByte(ref, '/'); i >= 0 {
		return mirror + ref[i:]
	}
	return mirror + "/" + ref
}

// AtMirror reports whether ref is pulled from mirror (HOST[/PREFIX]).
func AtMirror(ref, mirror string) bool {
	mirror = strings.TrimSuffix(mirror, "/")
	return mirror != "" && strings.HasPrefix(ref, mirror+"/")
}

// ReleaseImages returns the pods and image references of a release
// record: its manifest and its hooks, as Helm stored them.
func ReleaseImages(rel *rspb.Release) ([]Pod, []ImageRef, error) {
	r := &Rendering{}
	var err error
	if r.Objects, err = ManifestObjects(rel.Manifest); err != nil {
		return nil, nil, err
	}
	for _, h := range rel.Hooks {
		o, ok, err := parse(h.Manifest)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			o.Template, o.Hook = h.Path, true
			r.Hooks = append(r.Hooks, o)
		}
	}
	if rel.Chart != nil {
		r.ChartImages = chartImages(rel.Chart)
	}
	return r.Images()
}
