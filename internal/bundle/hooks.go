package bundle

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/gitops-preflight/kubectl-gitops-preflight/internal/redact"
)

// HookLogBytes bounds the log kept of each container of a hook Job's pod:
// its last 64 KiB.
const HookLogBytes = 64 << 10

// hooksDir is the folder of the hook Jobs' entries: hooks/<job>.json and
// hooks/<job>/<pod>/<container>.log.
const hooksDir = "hooks/"

// HookJob is one hook Job of the chart (validate-values, validate-usage) as
// a --post run saw it, with its pods, their logs and the events of them all.
// A pod the run saw once stays, with the last log read of it, even when
// Kubernetes deleted it later (a hook Job's TTL).
type HookJob struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
	// Seen is when the run last read the Job (UTC).
	Seen time.Time `json:"seen"`
	// Conditions are the Job's status conditions that are True
	// (Complete, Failed with its reason and message).
	Conditions []HookCondition `json:"conditions,omitempty"`
	Pods       []HookPod       `json:"pods,omitempty"`
	Events     []HookEvent     `json:"events,omitempty"`
}

// HookCondition is one True condition of a Job.
type HookCondition struct {
	Type    string `json:"type"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// HookPod is one pod of a hook Job.
type HookPod struct {
	Name       string          `json:"name"`
	Phase      string          `json:"phase"`
	Node       string          `json:"node,omitempty"`
	Containers []HookContainer `json:"containers"`
}

// HookContainer is one container of a hook Job's pod: its state as the
// kubelet reported it and the last HookLogBytes of its log, redacted.
type HookContainer struct {
	Name string `json:"name"`
	// State is "terminated: Error, exit code 1", "running", "waiting:
	// ImagePullBackOff".
	State string `json:"state"`
	Log   string `json:"log,omitempty"`
	// LogCut is true when the log was longer than HookLogBytes (its start
	// is not kept).
	LogCut bool `json:"logCut,omitempty"`
	// LogError is why the log could not be read (pod gone, kubelet
	// unreachable).
	LogError string `json:"logError,omitempty"`
}

// HookEvent is one event of a hook Job or of its pods.
type HookEvent struct {
	Object  string    `json:"object"` // "Job/validate-values", "Pod/validate-values-x7k2p"
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	Message string    `json:"message"`
	Count   int32     `json:"count,omitempty"`
	Last    time.Time `json:"last,omitempty"`
}

// RecordHooks reads the hook Jobs names in namespace through kube, with
// their pods, the last HookLogBytes of each container's log and the events
// of those objects, and keeps them for the bundle (hooks/), merged with what
// earlier calls kept. A Job that does not exist is not recorded; an error
// reading one is kept as the pod's LogError or dropped, never fatal: the
// checks report on the cluster, this only keeps what support needs.
func (r *Recorder) RecordHooks(ctx context.Context, kube kubernetes.Interface, namespace string, names []string) {
	for _, name := range names {
		job, err := kube.BatchV1().Jobs(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		h := HookJob{Namespace: namespace, Name: name, UID: string(job.UID), Seen: Now()}
		for _, c := range job.Status.Conditions {
			if c.Status == corev1.ConditionTrue {
				h.Conditions = append(h.Conditions, HookCondition{Type: string(c.Type), Reason: c.Reason, Message: redact.String(c.Message)})
			}
		}
		objects := []string{"Job/" + name}
		pods, err := kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "batch.kubernetes.io/controller-uid=" + string(job.UID)})
		if err == nil && len(pods.Items) == 0 {
			pods, err = kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + name})
		}
		if err == nil {
			for i := range pods.Items {
				p := &pods.Items[i]
				h.Pods = append(h.Pods, hookPod(ctx, kube, p))
				objects = append(objects, "Pod/"+p.Name)
			}
		}
		for _, o := range objects {
			kind, n, _ := strings.Cut(o, "/")
			evs, err := kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{"involvedObject.kind": kind, "involvedObject.name": n}.String()})
			if err != nil {
				continue
			}
			for _, e := range evs.Items {
				last := e.LastTimestamp.Time
				if last.IsZero() {
					last = e.EventTime.Time
				}
				h.Events = append(h.Events, HookEvent{Object: o, Type: e.Type, Reason: e.Reason, Message: redact.String(e.Message), Count: e.Count, Last: last.UTC()})
			}
		}
		sort.SliceStable(h.Events, func(i, j int) bool { return h.Events[i].Last.Before(h.Events[j].Last) })
		r.mu.Lock()
		r.hooks[name] = mergeHook(r.hooks[name], h)
		r.mu.Unlock()
	}
}

func hookPod(ctx context.Context, kube kubernetes.Interface, p *corev1.Pod) HookPod {
	hp := HookPod{Name: p.Name, Phase: string(p.Status.Phase), Node: p.Spec.NodeName}
	states := map[string]corev1.ContainerState{}
	for _, s := range p.Status.ContainerStatuses {
		states[s.Name] = s.State
	}
	for _, c := range p.Spec.Containers {
		hc := HookContainer{Name: c.Name, State: stateText(states[c.Name])}
		if p.Spec.NodeName == "" {
			hc.LogError = "never scheduled to a node: no log"
		} else {
			hc.Log, hc.LogCut, hc.LogError = podLog(ctx, kube, p.Namespace, p.Name, c.Name)
		}
		hp.Containers = append(hp.Containers, hc)
	}
	return hp
}

func stateText(s corev1.ContainerState) string {
	switch {
	case s.Terminated != nil:
		return fmt.Sprintf("terminated: %s, exit code %d", s.Terminated.Reason, s.Terminated.ExitCode)
	case s.Running != nil:
		return "running"
	case s.Waiting != nil:
		return "waiting: " + s.Waiting.Reason
	}
	return "unknown"
}

// podLog reads a container's log and keeps its last HookLogBytes, redacted
// line by line.
func podLog(ctx context.Context, kube kubernetes.Interface, ns, pod, container string) (string, bool, string) {
	rc, err := kube.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container}).Stream(ctx)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return "", false, "the pod is gone"
		}
		return "", false, firstLine(err.Error())
	}
	defer rc.Close()
	var tail []byte
	cut := false
	buf := make([]byte, 32<<10)
	for {
		n, err := rc.Read(buf)
		tail = append(tail, buf[:n]...)
		if len(tail) > HookLogBytes {
			tail, cut = tail[len(tail)-HookLogBytes:], true
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return redactLog(string(tail)), cut, firstLine(err.Error())
		}
	}
	return redactLog(string(tail)), cut, ""
}

// redactLog masks credential-looking values in each line (redact.String).
func redactLog(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = redact.String(l)
	}
	return strings.Join(lines, "\n")
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// mergeHook merges a new reading of a Job into the earlier one: the Job's
// status and events are the new reading's (events seen only earlier are
// kept), pods seen earlier and gone now are kept, and a container keeps its
// earlier log when the new reading has none.
func mergeHook(old *HookJob, h HookJob) *HookJob {
	if old == nil || old.UID != h.UID {
		if old != nil && old.UID != h.UID {
			// A new Job of the same name (the next helm upgrade): keep the
			// earlier one's pods, events and logs too, they explain why.
			h.Pods = append(append([]HookPod{}, old.Pods...), h.Pods...)
			h.Events = append(append([]HookEvent{}, old.Events...), h.Events...)
		}
		return &h
	}
	pods := map[string]HookPod{}
	for _, p := range h.Pods {
		pods[p.Name] = p
	}
	for _, p := range old.Pods {
		np, ok := pods[p.Name]
		if !ok {
			h.Pods = append(h.Pods, p)
			continue
		}
		for i, c := range np.Containers {
			for _, oc := range p.Containers {
				if oc.Name == c.Name && c.Log == "" && oc.Log != "" {
					np.Containers[i].Log, np.Containers[i].LogCut = oc.Log, oc.LogCut
				}
			}
		}
	}
	seen := map[HookEvent]bool{}
	for _, e := range h.Events {
		seen[e] = true
	}
	for _, e := range old.Events {
		if !seen[e] {
			h.Events = append(h.Events, e)
		}
	}
	sort.SliceStable(h.Events, func(i, j int) bool { return h.Events[i].Last.Before(h.Events[j].Last) })
	return &h
}

// hookEntries are the entries of the recorded hook Jobs.
func hookEntries(hooks map[string]*HookJob) (map[string][]byte, error) {
	out := map[string][]byte{}
	for name, h := range hooks {
		b, err := json.MarshalIndent(h, "", "  ")
		if err != nil {
			return nil, err
		}
		out[hooksDir+name+".json"] = b
		for _, p := range h.Pods {
			for _, c := range p.Containers {
				if c.Log != "" {
					out[hooksDir+name+"/"+p.Name+"/"+c.Name+".log"] = []byte(c.Log)
				}
			}
		}
	}
	return out, nil
}

// Hooks returns the hook Jobs a --post run recorded (hooks/), by name.
func (b *Bundle) Hooks() ([]HookJob, error) {
	var out []HookJob
	for name, v := range b.entries {
		if !strings.HasPrefix(name, hooksDir) || !strings.HasSuffix(name, ".json") || strings.Count(name, "/") != 1 {
			continue
		}
		var h HookJob
		if err := json.Unmarshal(v, &h); err != nil {
			return nil, fmt.Errorf("bundle: %s is not valid: %w", name, err)
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
