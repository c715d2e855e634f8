package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

// auditCount is what the audit log says of one plugin run.
type auditCount struct {
	total, pages int
	// dryRuns counts the writes sent with dryRun=All (the admission
	// checks' and upgrade-apply's: one per created or changed object and
	// one per workload).
	dryRuns int
	// byKind counts requests per "verb resource" (pages included).
	byKind map[string]string
	// duplicates lists any LIST of the same resource, namespace and
	// selectors started more than once (first pages only).
	duplicates []string
}

type auditEvent struct {
	Stage      string `json:"stage"`
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
}

// eachAuditEvent calls fn with every event of the audit log at path.
func eachAuditEvent(path string, fn func(e auditEvent)) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		fn(e)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return nil
}

// auditResource is e's resource as resource.group.
func auditResource(e auditEvent) string {
	res := e.ObjectRef.Resource
	if e.ObjectRef.APIGroup != "" {
		res += "." + e.ObjectRef.APIGroup
	}
	return res
}

func readAudit(path string) (map[string]auditCount, error) {
	type acc struct {
		total, pages, dryRuns int
		kinds                 map[string]int
		firstLists            map[string]int
	}
	users := map[string]*acc{}
	err := eachAuditEvent(path, func(e auditEvent) {
		if e.Stage != "ResponseComplete" && e.Stage != "Panic" {
			return
		}
		a := users[e.User.Username]
		if a == nil {
			a = &acc{kinds: map[string]int{}, firstLists: map[string]int{}}
			users[e.User.Username] = a
		}
		a.total++
		what := e.Verb + " " + e.RequestURI
		if e.ObjectRef != nil {
			res := auditResource(e)
			if e.ObjectRef.Subresource != "" {
				res += "/" + e.ObjectRef.Subresource
			}
			what = e.Verb + " " + res
		} else {
			u, _, _ := strings.Cut(e.RequestURI, "?")
			what = e.Verb + " " + u
		}
		a.kinds[what]++
		if strings.Contains(e.RequestURI, "dryRun=All") {
			a.dryRuns++
		}
		if strings.Contains(e.RequestURI, "continue=") {
			a.pages++
		} else if isList(e) {
			a.firstLists[listKey(e.RequestURI)]++
		}
	})
	if err != nil {
		return nil, err
	}

	out := map[string]auditCount{}
	for u, a := range users {
		c := auditCount{total: a.total, pages: a.pages, dryRuns: a.dryRuns, byKind: map[string]string{}}
		for k, n := range a.kinds {
			c.byKind[k] = strconv.Itoa(n)
		}
		for k, n := range a.firstLists {
			if n > 1 {
				c.duplicates = append(c.duplicates, fmt.Sprintf("%s listed %d times", k, n))
			}
		}
		sort.Strings(c.duplicates)
		out[u] = c
	}
	return out, nil
}

// isList reports whether e is a LIST, or a streaming list (a WATCH with
// sendInitialEvents=true, which the plugin uses for the big kinds on
// servers that serve it): the floors fetch both as one plain LIST.
func isList(e auditEvent) bool {
	return e.Verb == "list" || e.Verb == "watch" && strings.Contains(e.RequestURI, "sendInitialEvents=true")
}

// auditList is one first-page LIST of a run, as the audit log shows it.
type auditList struct {
	key      string // path and selectors (listKey)
	resource string // resource.group
}

// auditLists returns the first-page LISTs user made, in order.
func auditLists(path, user string) ([]auditList, error) {
	var out []auditList
	err := eachAuditEvent(path, func(e auditEvent) {
		if e.Stage != "ResponseComplete" || e.User.Username != user || !isList(e) || e.ObjectRef == nil || strings.Contains(e.RequestURI, "continue=") {
			return
		}
		out = append(out, auditList{key: listKey(e.RequestURI), resource: auditResource(e)})
	})
	return out, err
}

func listSet(l []auditList) map[string]bool {
	m := map[string]bool{}
	for _, x := range l {
		m[x.key] = true
	}
	return m
}

// setDiff describes how got differs from want ("" when alike).
func setDiff(want, got map[string]bool) string {
	var missing, extra []string
	for k := range want {
		if !got[k] {
			missing = append(missing, k)
		}
	}
	for k := range got {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "not listed: "+strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		parts = append(parts, "listed in addition: "+strings.Join(extra, ", "))
	}
	return strings.Join(parts, "; ")
}

// listKey is a LIST's path and selectors, without limit and continue.
func listKey(uri string) string {
	path, q, _ := strings.Cut(uri, "?")
	var keep []string
	for _, kv := range strings.Split(q, "&") {
		if strings.HasPrefix(kv, "labelSelector=") || strings.HasPrefix(kv, "fieldSelector=") {
			keep = append(keep, kv)
		}
	}
	if len(keep) > 0 {
		return path + "?" + strings.Join(keep, "&")
	}
	return path
}
