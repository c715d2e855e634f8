package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// The pods' streaming list is the biggest read of a run (30,000 pods at
// 5,000 nodes, 2-4 KB of protobuf each) and runtime-schedulable needs only
// each pod's node, phase and what component-helpers' PodRequests reads of
// its spec. podStream reads the watch stream's frames itself and decodes,
// with the generated protobuf code (corev1.PodSpec.Unmarshal), only those
// fields of each pod; metadata (managedFields, labels, owner references),
// the rest of the spec and the status (but its phase) are skipped on the
// wire, never allocated. Field numbers are those of
// k8s.io/api/core/v1/generated.proto; a test folds pods both ways and
// compares.
var (
	// PodSpec: containers 2, nodeName 10, initContainers 20, overhead 32,
	// resources 40 (pod-level).
	podSpecFields = map[protowire.Number]bool{2: true, 10: true, 20: true, 32: true, 40: true}
	// Container: name 1, resources 8, resizePolicy 23, restartPolicy 24,
	// restartPolicyRules 25 (a restartable init container is a sidecar).
	containerFields = map[protowire.Number]bool{1: true, 8: true, 23: true, 24: true, 25: true}
)

// protobufMagic prefixes every Kubernetes protobuf object (an envelope
// runtime.Unknown follows).
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// maxPodFrame bounds one frame of the stream (a pod is at most the 1.5 MiB
// etcd allows, its event a little more).
const maxPodFrame = 4 << 20

// podStream reads a streaming list of pods through rc (a core/v1 REST
// client) in protobuf, passing each pod, reduced as above, to fn; the pod
// is reused for the next one (fn copies what it keeps, as with each).
func podStream(rc rest.Interface) streamFunc {
	var sc podScratch
	return protoStream(rc, "pods", "", "Pod", func(raw []byte) (runtime.Object, error) { return slimPod(raw, &sc) })
}

// protoStream reads a streaming list of resource (plural) in namespace (""
// all) through rc in protobuf, decoding each object of kind with decode
// (given the object's protobuf bytes, without magic and envelope).
func protoStream(rc rest.Interface, resource, namespace, kind string, decode func(raw []byte) (runtime.Object, error)) streamFunc {
	return func(ctx context.Context, opts metav1.ListOptions, fn func(obj runtime.Object) error) (int, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		opts.Watch = true
		body, err := rc.Get().NamespaceIfScoped(namespace, namespace != "").Resource(resource).VersionedParams(&opts, scheme.ParameterCodec).
			SetHeader("Accept", runtime.ContentTypeProtobuf+";stream=watch").Stream(ctx)
		if err != nil {
			return 0, err
		}
		defer body.Close()
		r := &lastReadReader{r: body, last: time.Now()}
		n, _, err := readFrames(bufio.NewReaderSize(r, 64<<10), kind, decode, fn)
		if idle := time.Since(r.last); errors.Is(err, errStreamEnded) && !errors.Is(err, io.EOF) && idle >= streamStall {
			// Nothing came for a while, then the request's timeout: the
			// connection stalled. Pages would stall the same way, each for
			// another --request-timeout: the list fails now.
			return n, fmt.Errorf("the streaming list stalled after %d objects: nothing received for %s: %w", n, idle.Round(100*time.Millisecond), errors.Unwrap(err))
		}
		return n, err
	}
}

// streamStall is how long a streaming list may have received nothing when
// its read fails for it to count as stalled (the connection hung) rather
// than outlasted (objects still flowing when --request-timeout ended the
// request, which pages then read). An API server sends a streaming list's
// objects back to back.
const streamStall = time.Second

// lastReadReader records when its last read returned data.
type lastReadReader struct {
	r    io.Reader
	last time.Time
}

func (l *lastReadReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if n > 0 {
		l.last = time.Now()
	}
	return n, err
}

// errNotProtobuf is a watch stream in another encoding: the list is read
// in pages.
var errNotProtobuf = errors.New("the streaming list is not protobuf")

// readFrames reads length-delimited protobuf watch frames (the framing
// of k8s.io/apimachinery/pkg/runtime/serializer/protobuf's
// LengthDelimitedFramer: a 4-byte big-endian length, then the frame) until
// the initial-events-end bookmark. A stream in another encoding is
// errNotProtobuf.
func readFrames(r *bufio.Reader, kind string, decode func(raw []byte) (runtime.Object, error), fn func(obj runtime.Object) error) (n, events int, err error) {
	var (
		head  [4]byte
		frame []byte
	)
	for ; ; events++ {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			// io.EOF here: the server ended the response between frames.
			return n, events, streamEnded(err)
		}
		size := binary.BigEndian.Uint32(head[:])
		if size > maxPodFrame {
			return n, events, badFrame(events, fmt.Errorf("watch frame of %d bytes", size))
		}
		if cap(frame) < int(size) {
			frame = make([]byte, size)
		}
		frame = frame[:size]
		if _, err := io.ReadFull(r, frame); err != nil {
			return n, events, streamEnded(err)
		}
		// A frame is a metav1.WatchEvent encoded raw (the stream serializer
		// of k8s.io/apimachinery/pkg/runtime/serializer: no magic, no
		// envelope); its object is a whole protobuf object (magic, envelope).
		typ, object, err := watchEvent(frame)
		if err != nil {
			return n, events, badFrame(events, err)
		}
		okind, obj, err := unwrap(object)
		if err != nil {
			return n, events, badFrame(events, err)
		}
		switch string(typ) {
		case "ADDED":
			if string(okind) != kind {
				return n, events, fmt.Errorf("unexpected %s in a %s stream", okind, kind)
			}
			o, err := decode(obj)
			if err != nil {
				return n, events, err
			}
			n++
			if err := fn(o); err != nil {
				return n, events, fnError{err}
			}
		case "BOOKMARK":
			end, err := initialEventsEnd(obj)
			if err != nil {
				return n, events, err
			}
			if end {
				return n, events, nil
			}
		case "ERROR":
			var st metav1.Status
			if err := st.Unmarshal(obj); err != nil {
				return n, events, fmt.Errorf("decoding a watch error: %w", err)
			}
			return n, events, apierrors.FromObject(&st)
		default:
			return n, events, fmt.Errorf("unexpected %s event before the end of the streaming list", typ)
		}
	}
}

// badFrame is err, marked errNotProtobuf when the first frame does not
// parse (the stream is in another encoding: the list is read in pages).
// streamEnded is errStreamEnded with the read error that ended the stream
// (io.EOF: the server closed the response between two frames; anything else:
// the connection broke, was reset, or the request timed out).
func streamEnded(err error) error {
	return fmt.Errorf("%w: %w", errStreamEnded, err)
}

func badFrame(events int, err error) error {
	if events == 0 && !errors.Is(err, errNotProtobuf) {
		return fmt.Errorf("%w: %w", errNotProtobuf, err)
	}
	return err
}

// unwrap parses a protobuf envelope (the magic, then runtime.Unknown:
// typeMeta 1 {apiVersion 1, kind 2}, raw 2) without copying: it returns the
// kind and the raw bytes, which alias data.
func unwrap(data []byte) (kind, raw []byte, err error) {
	if !bytes.HasPrefix(data, protobufMagic) {
		return nil, nil, errNotProtobuf
	}
	err = pbFields(data[len(protobufMagic):], func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			return pbFields(v, func(num protowire.Number, v []byte) error {
				if num == 2 {
					kind = v
				}
				return nil
			})
		case 2:
			raw = v
		}
		return nil
	})
	return kind, raw, err
}

// watchEvent parses metav1.WatchEvent (type 1, object 2 {raw 1}); typ
// aliases data.
func watchEvent(data []byte) (typ, object []byte, err error) {
	err = pbFields(data, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			typ = v
		case 2:
			return pbFields(v, func(num protowire.Number, v []byte) error {
				if num == 1 {
					object = v
				}
				return nil
			})
		}
		return nil
	})
	return typ, object, err
}

// initialEventsEnd reports whether a bookmark pod's metadata (1) carries
// the annotation (12: key 1, value 2) k8s.io/initial-events-end: "true".
func initialEventsEnd(pod []byte) (bool, error) {
	end := false
	err := pbFields(pod, func(num protowire.Number, v []byte) error {
		if num != 1 {
			return nil
		}
		return pbFields(v, func(num protowire.Number, v []byte) error {
			if num != 12 {
				return nil
			}
			var k, val []byte
			if err := pbFields(v, func(num protowire.Number, v []byte) error {
				switch num {
				case 1:
					k = v
				case 2:
					val = v
				}
				return nil
			}); err != nil {
				return err
			}
			if string(k) == metav1.InitialEventsAnnotationKey && string(val) == "true" {
				end = true
			}
			return nil
		})
	})
	return end, err
}

// podScratch is slimPod's reusable space: the reduced spec and container,
// and the pod itself (fn must not keep the pod it is given).
type podScratch struct {
	spec, container []byte
	pod             corev1.Pod
}

// slimPod decodes a Pod's bytes (metadata 1, spec 2, status 3 {phase 1})
// into a Pod holding only the spec fields of podSpecFields (containers
// reduced to containerFields) and the phase.
func slimPod(data []byte, sc *podScratch) (*corev1.Pod, error) {
	sc.pod = corev1.Pod{}
	pod := &sc.pod
	err := pbFields(data, func(num protowire.Number, v []byte) error {
		switch num {
		case 2:
			sc.spec = sc.spec[:0]
			if err := pbFields(v, func(num protowire.Number, v []byte) error {
				if !podSpecFields[num] {
					return nil
				}
				if num == 2 || num == 20 { // a container: only containerFields
					sc.container = sc.container[:0]
					if err := pbFields(v, func(num protowire.Number, cv []byte) error {
						if containerFields[num] {
							sc.container = protowire.AppendTag(sc.container, num, protowire.BytesType)
							sc.container = protowire.AppendBytes(sc.container, cv)
						}
						return nil
					}); err != nil {
						return err
					}
					v = sc.container
				}
				sc.spec = protowire.AppendTag(sc.spec, num, protowire.BytesType)
				sc.spec = protowire.AppendBytes(sc.spec, v)
				return nil
			}); err != nil {
				return err
			}
			return pod.Spec.Unmarshal(sc.spec)
		case 3:
			return pbFields(v, func(num protowire.Number, v []byte) error {
				if num == 1 {
					pod.Status.Phase = corev1.PodPhase(v)
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("decoding a pod: %w", err)
	}
	return pod, nil
}

// pbFields calls fn with the number and bytes of every length-delimited field
// of a protobuf message (strings, bytes, messages, map entries); other wire
// types (varints, fixed) are skipped, as no field read here has one.
func pbFields(msg []byte, fn func(num protowire.Number, v []byte) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return protowire.ParseError(n)
		}
		msg = msg[n:]
		if typ != protowire.BytesType {
			m := protowire.ConsumeFieldValue(num, typ, msg)
			if m < 0 {
				return protowire.ParseError(m)
			}
			msg = msg[m:]
			continue
		}
		v, m := protowire.ConsumeBytes(msg)
		if m < 0 {
			return protowire.ParseError(m)
		}
		if err := fn(num, v); err != nil {
			return err
		}
		msg = msg[m:]
	}
	return nil
}

// wireFilter says which fields of a protobuf message to keep: a field
// whose entry is nil is kept whole, one with a filter is a message kept
// through that filter; fields without an entry are left out.
type wireFilter map[protowire.Number]wireFilter

// keep is the entry of a field kept whole.
var keep wireFilter

// apply appends the kept fields of msg to dst.
func (f wireFilter) apply(dst, msg []byte) ([]byte, error) {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		sub, ok := f[num]
		switch {
		case !ok:
		case sub == nil || typ != protowire.BytesType:
			dst = append(dst, msg[:n+m]...)
		default:
			v, _ := protowire.ConsumeBytes(msg[n:])
			inner, err := sub.apply(nil, v)
			if err != nil {
				return nil, err
			}
			dst = protowire.AppendTag(dst, num, protowire.BytesType)
			dst = protowire.AppendBytes(dst, inner)
		}
		msg = msg[n+m:]
	}
	return dst, nil
}

// nodeFields are what NodeFrom reads of a Node: metadata name 1 and
// labels 11; the spec (providerID, unschedulable, taints); status
// allocatable 2 and conditions 4. Not the images, addresses, node info,
// volumes, annotations or managedFields.
var nodeFields = wireFilter{1: {1: keep, 11: keep}, 2: keep, 3: {2: keep, 4: keep}}

// deploymentFields are what DeploymentFrom reads of a Deployment:
// metadata name 1, namespace 3, resourceVersion 6, labels 11, annotations
// 12; spec replicas 1, selector 2, template 3 (its labels, its containers'
// name 1, image 2, command 3, args 4); the status. Not managedFields, the
// rest of the pod template (env, probes, volumes) or the strategy.
var deploymentFields = wireFilter{
	1: {1: keep, 3: keep, 6: keep, 11: keep, 12: keep},
	2: {1: keep, 2: keep, 3: {1: {11: keep}, 2: {2: {1: keep, 2: keep, 3: keep, 4: keep}}}},
	3: keep,
}

// slimNode decodes a Node's protobuf bytes through nodeFields.
func slimNode(raw []byte) (runtime.Object, error) {
	return filtered(nodeFields, raw, "a node", &corev1.Node{})
}

// slimDeployment decodes a Deployment's protobuf bytes through
// deploymentFields.
func slimDeployment(raw []byte) (runtime.Object, error) {
	return filtered(deploymentFields, raw, "a Deployment", &appsv1.Deployment{})
}

// filtered decodes raw through f into obj (with the generated decoder);
// what names the object in the error.
func filtered[T interface {
	runtime.Object
	Unmarshal([]byte) error
}](f wireFilter, raw []byte, what string, obj T) (runtime.Object, error) {
	b, err := f.apply(nil, raw)
	if err == nil {
		err = obj.Unmarshal(b)
	}
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", what, err)
	}
	return obj, nil
}
