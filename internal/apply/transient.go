package apply

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
)

// NoAnswerError is a dry run that got no answer from the API server about
// its object, after asking again (retry.DefaultBackoff): a timeout or a
// broken connection, the API server's own timeout or throttling. It is no
// refusal: the check that meets it reports an error, never a verdict.
type NoAnswerError struct {
	Kind, Namespace, Name string
	Err                   error
}

func (e *NoAnswerError) Error() string {
	name := e.Name
	if e.Namespace != "" {
		name = e.Namespace + "/" + e.Name
	}
	return fmt.Sprintf("no answer from the API server to the dry run of %s %s (asked %d times): %v", e.Kind, name, retry.DefaultBackoff.Steps, e.Err)
}

func (e *NoAnswerError) Unwrap() error { return e.Err }

// transient reports whether err is a failure to get the API server's
// answer rather than the answer: an error with no API status (the
// transport's: a client timeout, a reset or refused connection), or the
// API server's own timeout or throttling (504, 429). Asked again, the
// answer may differ.
func transient(err error) bool {
	if err == nil {
		return false
	}
	if apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) {
		return true
	}
	var st apierrors.APIStatus
	return !errors.As(err, &st)
}

// noAnswerText are the words of the transport's errors as Helm's kube
// client joins them into text ("cannot patch ... : <error>"), where their
// type is lost: Go's net/http client timeout, the context's deadline, a
// network timeout, a connection reset, refused or lost, an empty answer.
var noAnswerText = []string{
	"Client.Timeout exceeded", "context deadline exceeded", "i/o timeout", "TLS handshake timeout",
	"connection reset by peer", "connection refused", "http2: client connection lost", "unexpected EOF",
	"the server was unable to return a response in the time allotted", "the server has received too many requests",
}

// transientText is transient for an error that Helm turned into text.
func transientText(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	for _, s := range noAnswerText {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// askAgain runs send, again with retry.DefaultBackoff while its error is
// one isTransient says got no answer; it returns the last error and
// whether that one got no answer.
func askAgain(isTransient func(error) bool, send func() error) (err error, noAnswer bool) {
	err = retry.OnError(retry.DefaultBackoff, isTransient, send)
	return err, isTransient(err)
}
