package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
)

// ContainerState is what the diagnostics read of one container status.
type ContainerState struct {
	Name  string
	Init  bool
	Ready bool
	// RestartCount is status.restartCount.
	RestartCount int32
	// Waiting is state.waiting.reason (CrashLoopBackOff, ImagePullBackOff,
	// CreateContainerConfigError, ...), WaitingMessage its message.
	Waiting, WaitingMessage string
	// Terminated is state.terminated.reason of the current state, else of
	// lastState (why the last run ended: Error, OOMKilled, ...), with its exit code.
	Terminated string
	ExitCode   int32
}

// Pod summarises a Pod for the post-install diagnostics.
type Pod struct {
	Namespace, Name string
	Labels          map[string]string
	Created         time.Time
	Phase           corev1.PodPhase
	// Node is spec.nodeName ("" until the pod is scheduled).
	Node string
	// Unschedulable is set when PodScheduled is False; SchedulerMessage is the
	// scheduler's message ("0/3 nodes are available: ...").
	Unschedulable    bool
	SchedulerMessage string
	Containers       []ContainerState
}

// PodFrom summarises a Pod.
func PodFrom(p *corev1.Pod) Pod {
	out := Pod{Namespace: p.Namespace, Name: p.Name, Labels: copyMap(p.Labels), Created: p.CreationTimestamp.Time, Phase: p.Status.Phase, Node: p.Spec.NodeName}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			out.Unschedulable = true
			out.SchedulerMessage = c.Message
		}
	}
	add := func(cs []corev1.ContainerStatus, init bool) {
		for _, c := range cs {
			st := ContainerState{Name: c.Name, Init: init, Ready: c.Ready, RestartCount: c.RestartCount}
			if w := c.State.Waiting; w != nil {
				st.Waiting, st.WaitingMessage = w.Reason, w.Message
			}
			t := c.State.Terminated
			if t == nil {
				t = c.LastTerminationState.Terminated
			}
			if t != nil {
				st.Terminated, st.ExitCode = t.Reason, t.ExitCode
			}
			out.Containers = append(out.Containers, st)
		}
	}
	add(p.Status.InitContainerStatuses, true)
	add(p.Status.ContainerStatuses, false)
	return out
}

// Pods lists the Pods of one namespace once per snapshot (paginated). The
// post-install checks call it only when something is wrong, and only for the
// runtime namespace.
func (s *Snapshot) Pods(namespace string) ([]Pod, error) {
	return Memo(s, "pods/"+namespace, func() ([]Pod, error) {
		return listAll(s.ctx, "pods", namespace, metav1.ListOptions{},
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Kube.CoreV1().Pods(namespace).List(ctx, o)
			}, PodFrom)
	})
}

// Event summarises a core/v1 Event.
type Event struct {
	// Kind and Name identify the involved object.
	Kind, Name string
	Reason     string
	Message    string
	Count      int32
	// Last is lastTimestamp, else eventTime, else the creation time.
	Last time.Time
}

// WarningEvents lists the Warning events of one namespace once per snapshot
// (field selector type=Warning, paginated), newest first.
func (s *Snapshot) WarningEvents(namespace string) ([]Event, error) {
	return Memo(s, "events/warning/"+namespace, func() ([]Event, error) {
		var out []Event
		opts := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("type", corev1.EventTypeWarning).String()}
		err := each(s.ctx, "events", namespace, opts,
			func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return s.clients.Kube.CoreV1().Events(namespace).List(ctx, o)
			},
			func(obj runtime.Object) error {
				e, ok := obj.(*corev1.Event)
				if !ok {
					return fmt.Errorf("unexpected %T in event list", obj)
				}
				out = append(out, EventFrom(e))
				return nil
			})
		sort.SliceStable(out, func(i, j int) bool { return out[i].Last.After(out[j].Last) })
		return out, err
	})
}

// EventFrom summarises an Event.
func EventFrom(e *corev1.Event) Event {
	last := e.LastTimestamp.Time
	if last.IsZero() {
		last = e.EventTime.Time
	}
	if last.IsZero() {
		last = e.CreationTimestamp.Time
	}
	return Event{Kind: e.InvolvedObject.Kind, Name: e.InvolvedObject.Name, Reason: e.Reason, Message: e.Message, Count: e.Count, Last: last}
}

// MaxLogBytes bounds how much of a log is fetched (limitBytes), so a noisy
// pod cannot blow up memory or the report.
const MaxLogBytes = 64 << 10

// PodLogTail returns the last n lines of a container's log (the pods/log
// subresource with tailLines=n and limitBytes=MaxLogBytes). The API server
// proxies this to the kubelet, so it fails when the pod is gone or the
// kubelet is unreachable.
func (s *Snapshot) PodLogTail(ctx context.Context, namespace, pod, container string, n int64) ([]string, error) {
	limit := int64(MaxLogBytes)
	req := s.clients.Kube.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, TailLines: &n, LimitBytes: &limit})
	rc, err := req.Stream(ctx)
	if err != nil {
		return nil, &ListError{Verb: "get", Resource: "pods/log", Namespace: namespace, Err: err}
	}
	defer rc.Close()
	return tailLines(rc, int(n))
}

// tailLines reads r and keeps its last n lines.
func tailLines(r io.Reader, n int) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLogBytes)
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), "\r"))
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return lines, sc.Err()
}
