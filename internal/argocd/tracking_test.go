package argocd

import (
	"reflect"
	"strings"
	"testing"
)

// TestTrackingSet: the marks of each method, as Argo CD's SetAppInstance
// sets them; the label of annotation+label cut to 63 characters ending in
// an alphanumeric; the maps given left as they were.
func TestTrackingSet(t *testing.T) {
	labels := map[string]string{"app.kubernetes.io/name": "x"}
	annotations := map[string]string{"a": "b"}
	id := "rt1:apps/Deployment:codefresh/web"
	for _, c := range []struct {
		tr                 Tracking
		wantLabel, wantAnn string
	}{
		{Tracking{App: "rt1"}, "", id},
		{Tracking{App: "rt1", Method: "annotation"}, "", id},
		{Tracking{App: "rt1", Method: "label"}, "rt1", ""},
		{Tracking{App: "rt1", Method: "annotation+label"}, "rt1", id},
	} {
		l, a := c.tr.Set(labels, annotations, "apps", "Deployment", "codefresh", "web")
		if l[DefaultInstanceLabelKey] != c.wantLabel || a[TrackingAnnotation] != c.wantAnn {
			t.Errorf("%+v: label %q, annotation %q; want %q, %q", c.tr, l[DefaultInstanceLabelKey], a[TrackingAnnotation], c.wantLabel, c.wantAnn)
		}
		if l["app.kubernetes.io/name"] != "x" || a["a"] != "b" {
			t.Errorf("%+v: dropped what was there: %v %v", c.tr, l, a)
		}
	}
	if !reflect.DeepEqual(labels, map[string]string{"app.kubernetes.io/name": "x"}) || !reflect.DeepEqual(annotations, map[string]string{"a": "b"}) {
		t.Errorf("the maps given changed: %v %v", labels, annotations)
	}
	l, _ := Tracking{App: "x", Method: "label", LabelKey: "argocd.argoproj.io/instance"}.Set(nil, nil, "", "ConfigMap", "ns", "c")
	if l["argocd.argoproj.io/instance"] != "x" {
		t.Errorf("instanceLabelKey not used: %v", l)
	}
	long := strings.Repeat("a", 62) + "-b"
	l, _ = Tracking{App: long, Method: "annotation+label"}.Set(nil, nil, "", "ConfigMap", "ns", "c")
	if got := l[DefaultInstanceLabelKey]; got != strings.Repeat("a", 62) {
		t.Errorf("label of a 64-character app %q, want it cut to 62 a's", got)
	}
}
