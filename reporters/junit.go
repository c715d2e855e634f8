package reporters

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gitops-preflight/kubectl-gitops-preflight/checks"
)

// JUnit renders the report as JUnit XML for CI test dashboards (GitLab,
// Jenkins, Azure DevOps, GitHub test reporters): one <testsuite> for the run
// and one <testcase> per check, named by check ID with classname
// "gitops-preflight.<category>". Statuses map as follows:
//
//	pass, warn  passing testcase; warn says so in <system-out>
//	fail        <failure type="fail" message="..."> with hint and docs
//	error       <error type="error" message="..."> likewise, counted in errors
//	skip        <skipped message="...">
//	waived      passing testcase; <system-out> says "waived", the status it
//	            covers, the message and the waiver's reason, owner and expiry
//
// Times are the checks' durations in seconds; the suite's time is their sum.
type JUnit struct {
	// Name is the <testsuites> name: the command as the user ran it
	// ("kubectl gitops-preflight" when empty, "helm gitops-preflight" under Helm).
	Name string
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	Time      string `xml:"time,attr"`
	// Properties carry the check's impact (install-fails, runtime-breaks,
	// advisory).
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Failure    *junitFailure   `xml:"failure,omitempty"`
	Error      *junitFailure   `xml:"error,omitempty"`
	Skipped    *junitSkipped   `xml:"skipped,omitempty"`
	SystemOut  *junitText      `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Body    string `xml:",cdata"`
}

// junitText is element text kept readable (newlines as they are) in CDATA.
type junitText struct {
	Text string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// Report writes the XML declaration and the <testsuites> document.
func (j JUnit) Report(w io.Writer, r *checks.Report) error {
	suite, total := junitSuiteOf(r, "")
	return j.write(w, []junitSuite{suite}, total)
}

// fleet writes a fleet as one <testsuite> per cluster, named with its
// context; a cluster that could not be checked at all is a suite with one
// <error> testcase saying why.
func (j JUnit) fleet(w io.Writer, f *Fleet) error {
	suites := make([]junitSuite, 0, len(f.Entries))
	var total time.Duration
	for _, e := range f.Entries {
		if e.Report != nil {
			s, d := junitSuiteOf(e.Report, e.Context)
			suites = append(suites, s)
			total += d
			continue
		}
		suites = append(suites, junitSuite{
			Name: "gitops-preflight " + f.Mode.Phase() + " (" + e.Context + ")", Tests: 1, Errors: 1, Time: seconds(0),
			Properties: []junitProperty{{"cluster.context", e.Context}},
			Cases: []junitCase{{Name: "kubeconfig context", Classname: "gitops-preflight.cluster", Time: seconds(0),
				Error: &junitFailure{Type: "error", Message: e.Err, Body: e.Err}}},
		})
	}
	return j.write(w, suites, total)
}

// write writes the XML declaration and the <testsuites> of suites, whose
// counts it sums; total is the suites' time.
func (j JUnit) write(w io.Writer, suites []junitSuite, total time.Duration) error {
	doc := junitSuites{Name: Options{Name: j.Name}.name(), Suites: suites, Time: seconds(total)}
	for _, s := range suites {
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitSuiteOf is the <testsuite> of one report; context, when not "",
// names the cluster in the suite's name (a fleet's suites). It returns the
// suite and its time, the sum of the checks' durations.
func junitSuiteOf(r *checks.Report, context string) (junitSuite, time.Duration) {
	suite := junitSuite{Name: "gitops-preflight " + r.Mode.Phase()}
	if context != "" {
		suite.Name += " (" + context + ")"
	}
	for _, p := range []junitProperty{
		{"cluster.context", r.Cluster.Context},
		{"cluster.server", r.Cluster.Server},
		{"cluster.version", r.Cluster.Version},
	} {
		if p.Value != "" {
			suite.Properties = append(suite.Properties, p)
		}
	}
	var total time.Duration
	for _, o := range r.Outcomes {
		total += o.Duration
		c := junitCase{
			Name:       o.ID,
			Classname:  "gitops-preflight." + string(o.Category),
			Time:       seconds(o.Duration),
			Properties: []junitProperty{{"impact", string(o.Impact)}},
		}
		switch o.Status {
		case checks.StatusFail:
			c.Failure = &junitFailure{Type: string(o.Status), Message: o.Message, Body: failureBody(o)}
			suite.Failures++
		case checks.StatusError:
			// The check could not decide (JUnit's <error>: an unexpected
			// problem, not a failed assertion), counted in errors.
			c.Error = &junitFailure{Type: string(o.Status), Message: o.Message, Body: failureBody(o)}
			suite.Errors++
		case checks.StatusSkip:
			c.Skipped = &junitSkipped{Message: o.Message}
			suite.Skipped++
		default:
			out := string(o.Status) + ": " + o.Message
			if o.Status == checks.StatusWarn && o.Hint != "" {
				out += "\nhint: " + o.Hint
			}
			if w := o.Waiver; w != nil {
				out = fmt.Sprintf("waived (%s): %s\nwaiver reason: %s\nwaiver expires: %s", w.Status, o.Message, w.Reason, w.Expires)
				if w.Owner != "" {
					out += "\nwaiver owner: " + w.Owner
				}
			}
			c.SystemOut = &junitText{Text: out}
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, c)
	}
	suite.Time = seconds(total)
	return suite, total
}

// failureBody is the text of a <failure>: title, message, hint, where the
// value that caused it is set, objects, docs.
func failureBody(o checks.Outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n%s", o.Status, o.Title, o.Message)
	if o.Hint != "" {
		b.WriteString("\nhint: " + o.Hint)
	}
	if l := sourceLine(o.Source); l != "" {
		b.WriteString("\nvalue: set " + l)
	}
	for _, obj := range o.Objects {
		b.WriteString("\nobject: " + obj.String())
	}
	if o.Fixable {
		b.WriteString("\nfixable: rerun with --fix")
	}
	b.WriteString("\ndocs: " + o.Docs())
	return b.String()
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%.3f", d.Seconds())
}
