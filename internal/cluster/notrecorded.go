package cluster

import "errors"

// ErrNotRecorded is what a replay (replay FILE) answers for anything the
// recorded run never asked: it opens no connection, so it has no answer.
var ErrNotRecorded = errors.New("not recorded in the bundle (replay opens no connection)")

// NotRecordedError is the error of one request a replay has no recorded
// answer for. It reaches a check through client-go's wrapping (*url.Error)
// and any %w of ours, so errors.As finds it: a check that meets it has no
// answer to judge, and the runner reports it as an error naming the
// request, never as a verdict. It unwraps to ErrNotRecorded.
type NotRecordedError struct {
	// Request names what was asked: "GET /api/v1/namespaces/x/pods",
	// "running helm version", "looking up helm on PATH".
	Request string
}

func (e *NotRecordedError) Error() string { return e.Request + ": " + ErrNotRecorded.Error() }

// Unwrap returns ErrNotRecorded.
func (e *NotRecordedError) Unwrap() error { return ErrNotRecorded }

// AsNotRecorded returns the NotRecordedError err is or wraps, if any.
func AsNotRecorded(err error) (*NotRecordedError, bool) {
	var nr *NotRecordedError
	if errors.As(err, &nr) {
		return nr, true
	}
	return nil, false
}
