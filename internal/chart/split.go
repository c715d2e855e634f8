package chart

import (
	"strings"
	"sync"
)

// splitDocuments splits a YAML stream into its documents, in order, exactly
// as Helm's releaseutil.SplitManifests does (pkg/releaseutil/manifest.go:
// the stream trimmed, split at each match of the regular expression
// `(?:^|\s*\n)---\s*`, empty pieces dropped, each piece trimmed), without
// the regular expression: Go's regexp engine tries that unanchored pattern
// at every byte, about 0.15 CPU s for the 2.5 MB manifest of chart 0.30.0
// (its CRDs), paid for every manifest a run parses (TestSplitDocumentsAsHelm
// compares the two on the real charts and on random streams).
//
// A match is a "---" at the start of the stream, or a newline followed by
// "---" with the whitespace before that newline (back to the previous
// match's end); either way with the whitespace after the "---". Whitespace
// is the regular expression's \s (space, \t, \n, \f, \r); the trims are
// strings.TrimSpace's.
func splitDocuments(stream string) []string {
	s := strings.TrimSpace(stream)
	var out []string
	add := func(d string) {
		if d != "" {
			out = append(out, strings.TrimSpace(d))
		}
	}
	skip := func(e int) int {
		for e < len(s) && isRegexpSpace(s[e]) {
			e++
		}
		return e
	}
	beg := 0
	if strings.HasPrefix(s, "---") {
		beg = skip(3)
	}
	for pos := beg; ; {
		i := strings.Index(s[pos:], "\n---")
		if i < 0 {
			break
		}
		nl := pos + i
		start := nl
		for start > pos && isRegexpSpace(s[start-1]) {
			start--
		}
		add(s[beg:start])
		beg = skip(nl + 4)
		pos = beg
	}
	add(s[beg:])
	return out
}

// isRegexpSpace is the regular expression's \s (RE2: [\t\n\f\r ]).
func isRegexpSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\f' || b == '\r'
}

// parsedManifests keeps the objects of the last manifests ManifestObjects
// parsed, by manifest: an --upgrade run reads the release's current
// manifest in several checks (release-apis, upgrade-values, the admission
// plan), megabytes of YAML each time. At most maxParsed are kept; a
// fleet run's next cluster starts them over.
var parsedManifests = struct {
	sync.Mutex
	m map[string]*parsedManifest
}{m: map[string]*parsedManifest{}}

const maxParsed = 4

type parsedManifest struct {
	once sync.Once
	objs []Object
	err  error
}

// manifestObjectsOnce is ManifestObjects parsed once per manifest; every
// caller gets its own copy of the slice (callers set fields of the
// objects), sharing the documents' text and JSON, which nobody writes.
func manifestObjectsOnce(manifest string) ([]Object, error) {
	parsedManifests.Lock()
	p, ok := parsedManifests.m[manifest]
	if !ok {
		if len(parsedManifests.m) >= maxParsed {
			parsedManifests.m = map[string]*parsedManifest{}
		}
		p = &parsedManifest{}
		parsedManifests.m[manifest] = p
	}
	parsedManifests.Unlock()
	p.once.Do(func() { p.objs, p.err = parseManifest(manifest) })
	if p.err != nil {
		return nil, p.err
	}
	return append([]Object(nil), p.objs...), nil
}
