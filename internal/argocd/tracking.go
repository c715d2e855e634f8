package argocd

import (
	"fmt"
	"regexp"
	"strings"
)

// Argo CD's resource tracking settings in argocd-cm, and their defaults
// (https://argo-cd.readthedocs.io/en/stable/user-guide/resource_tracking/;
// annotation tracking is the default since Argo CD 3.0).
const (
	TrackingMethodKey       = "application.resourceTrackingMethod"
	InstanceLabelKeySetting = "application.instanceLabelKey"
	DefaultTrackingMethod   = "annotation"
	DefaultInstanceLabelKey = "app.kubernetes.io/instance"
)

// Tracking is how Argo CD marks the objects an Application applies: App is
// the application part of the mark ("<app>", or "<app namespace>_<app>"
// for an Application outside Argo CD's namespace), Method argocd-cm's
// application.resourceTrackingMethod ("annotation", "label" or
// "annotation+label"; "" is the default, annotation) and LabelKey its
// application.instanceLabelKey ("" is app.kubernetes.io/instance).
type Tracking struct {
	App, Method, LabelKey string
}

// Tracking is the tracking of the Application b describes.
func (b *SyncBase) Tracking() Tracking {
	return Tracking{App: b.TrackingApp, Method: b.TrackingMethod, LabelKey: b.InstanceLabelKey}
}

// Set returns labels and annotations with Argo CD's marks of the object
// group/kind namespace/name added, as its SetAppInstance does
// (https://github.com/argoproj/argo-cd/blob/v3.6.1/util/argo/resource_tracking.go):
// the annotation argocd.argoproj.io/tracking-id
// "<app>:<group>/<kind>:<namespace>/<name>" for annotation tracking, the
// label LabelKey: <app> for label tracking (cut to a label's 63
// characters, ending in an alphanumeric, with annotation+label), both for
// annotation+label. The maps given are not changed.
func (tr Tracking) Set(labels, annotations map[string]string, group, kind, namespace, name string) (map[string]string, map[string]string) {
	method := tr.Method
	if method == "" {
		method = DefaultTrackingMethod
	}
	key := tr.LabelKey
	if key == "" {
		key = DefaultInstanceLabelKey
	}
	withLabel := func(v string) {
		out := make(map[string]string, len(labels)+1)
		for k, x := range labels {
			out[k] = x
		}
		out[key] = v
		labels = out
	}
	withAnnotation := func() {
		out := make(map[string]string, len(annotations)+1)
		for k, x := range annotations {
			out[k] = x
		}
		out[TrackingAnnotation] = fmt.Sprintf("%s:%s/%s:%s/%s", tr.App, group, kind, namespace, name)
		annotations = out
	}
	switch method {
	case "label":
		withLabel(tr.App)
	case "annotation+label":
		withAnnotation()
		withLabel(truncateLabel(tr.App))
	default:
		withAnnotation()
	}
	return labels, annotations
}

// Tracks reports whether an object with labels and annotations carries
// tr's mark: what Argo CD reads to find the live objects an Application
// manages, and so the only ones its prune can delete (the annotation's
// application part for annotation and annotation+label tracking, the label
// for label tracking;
// https://github.com/argoproj/argo-cd/blob/v3.6.1/util/argo/resource_tracking.go
// GetAppName). An object Argo CD applied without a mark (a CRD: see
// SetAppInstance's callers) is not one of them.
func (tr Tracking) Tracks(labels, annotations map[string]string) bool {
	if tr.Method == "label" {
		key := tr.LabelKey
		if key == "" {
			key = DefaultInstanceLabelKey
		}
		return labels[key] == tr.App
	}
	app, _, ok := strings.Cut(annotations[TrackingAnnotation], ":")
	return ok && app == tr.App
}

// labelEnd is what a label value may end with.
var labelEnd = regexp.MustCompile(`[a-zA-Z0-9]$`)

// truncateLabel is Argo CD's TruncateLabel: a value over 63 characters cut
// to 63, then shortened until it ends in an alphanumeric.
func truncateLabel(v string) string {
	if len(v) <= 63 {
		return v
	}
	v = v[:63]
	for len(v) > 1 && !labelEnd.MatchString(v) {
		v = v[:len(v)-1]
	}
	return v
}
