// Package redact masks credential values in text the plugin prints: check
// messages and hints, log lines, Helm release descriptions, events and
// errors. It keeps references to secrets readable (secretKeyRef, secretName,
// existingSecret, passwordKey: the names of Secrets and keys), since a report
// that hides which Secret is wrong is of no use, and masks only values.
//
// Shapes masked (case-insensitive), each value replaced by Mask:
//
//	password=VALUE  token: VALUE  "apiKey":"VALUE"  spec.password=VALUE
//	token => VALUE  token -> VALUE  token := VALUE  token=[VALUE]  token=(VALUE)
//	x-api-key VALUE  api_key VALUE          (an API key name, then a space)
//	PAT: VALUE  client_secret: VALUE  credentials=VALUE
//	Authorization: Basic VALUE  Authorization: Bearer VALUE  Bearer VALUE
//	https://user:VALUE@host                 (userinfo of any URL)
//	eyJ….….…                                 (a JWT, wherever it appears)
//	-----BEGIN … PRIVATE KEY----- … -----END … PRIVATE KEY-----
package redact

import (
	"regexp"
	"strings"
)

// Mask replaces every redacted value.
const Mask = "***"

var (
	urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)([^/\s@]+)(@)`)
	privateKey  = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`)
	jwt         = regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+`)
	authScheme  = regexp.MustCompile(`(?i)\b(basic|bearer|digest|negotiate)(\s+)([A-Za-z0-9._~+/=:-]{6,})`)
	// keyValue: 1 key, 2 separator, 3 auth scheme, 4 opening bracket or
	// quote, 5 value.
	keyValue = regexp.MustCompile(`(?i)([A-Za-z0-9_.-]*(?:token|password|passwd|pwd|secret|api[-_]?key|access[-_]?key|private[-_]?key|authorization|credentials?|\bpat\b)[A-Za-z0-9_.-]*)` +
		`(["']?\s*(?:=>|->|:=|[:=])\s*|\s+)` +
		`((?:basic|bearer|digest|negotiate)\s+)?` +
		`([\[("'<]?)` +
		`([^\s"',;{}\[\]()<>:=]{1,64})`)
	// apiKeyName is a key whose value may follow after a space alone.
	apiKeyName = regexp.MustCompile(`(?i)(api[-_]?key|access[-_]?key|private[-_]?key|\bpat\b)$`)
	// keyNameSuffix: camelCase names of keys inside a Secret
	// (passwordKey, tokenKey) are references; apiKey, secretKey... are values.
	valueKeySuffix = regexp.MustCompile(`(?i)(api|secret|access|private|client|x)[-_]?key$`)
	// kindBefore is a Kubernetes kind word and one space, as messages name an
	// object ("pod NAME: reason", "container NAME: state").
	kindBefore = regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_.-])(?:pod|container|deployment|statefulset|daemonset|replicaset|job|cronjob|service|serviceaccount|configmap|ingress|node|namespace|rollout|application)s? $`)
	// objectName is a lowercase DNS subdomain (RFC 1123), as Kubernetes
	// names objects.
	objectName = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$`)
	// sensitiveEnd is a key that ends in a credential word.
	sensitiveEnd = regexp.MustCompile(`(?i)(token|password|passwd|pwd|secrets?|api[-_]?key|access[-_]?key|private[-_]?key|authorization|credentials?|pat)$`)
	// imageCoordinate is a values path ending in where an image comes from
	// ("sealed-secrets.image.registry", "...image.repository", "...tag"):
	// an image's registry, repository, tag or digest is public, whatever
	// chart or component the path starts with.
	imageCoordinate = regexp.MustCompile(`(?i)\.(image|[a-z]*image)\.(registry|repository|tag|digest)$|\.imageRegistry$`)
)

// String returns s with every credential value replaced by Mask.
func String(s string) string {
	if s == "" {
		return s
	}
	s = privateKey.ReplaceAllString(s, "-----BEGIN PRIVATE KEY----- "+Mask+" -----END PRIVATE KEY-----")
	s = urlUserinfo.ReplaceAllString(s, "${1}"+Mask+"${3}")
	s = jwt.ReplaceAllString(s, Mask)
	s = keyValues(s)
	return authScheme.ReplaceAllStringFunc(s, func(m string) string {
		sub := authScheme.FindStringSubmatch(m)
		if sub[3] == Mask || strings.HasPrefix(sub[3], Mask) {
			return m
		}
		return sub[1] + sub[2] + Mask
	})
}

// keyValues masks the value of each sensitive key. A candidate whose value
// is itself a key ("userToken: [token: v]") is scanned again from there.
func keyValues(s string) string {
	var b strings.Builder
	pos := 0
	for pos < len(s) {
		loc := keyValue.FindStringSubmatchIndex(s[pos:])
		if loc == nil {
			break
		}
		for i := range loc {
			if loc[i] >= 0 {
				loc[i] += pos
			}
		}
		key := s[loc[2]:loc[3]]
		sep := s[loc[4]:loc[5]]
		valStart, valEnd := loc[10], loc[11]
		val := s[valStart:valEnd]
		spaceOnly := strings.TrimSpace(sep) == ""
		// A prefixed annotation key (nginx.ingress.kubernetes.io/proxy-ssl-secret,
		// .../auth-secret) names a Secret as namespace/name: a reference.
		annotation := loc[2] > 0 && s[loc[2]-1] == '/'
		// An object named after its kind ("pod sealed-secrets-controller-5d7f:
		// CrashLoopBackOff") is a name, unless it ends in a credential word
		// ("container db-password: x" stays masked).
		annotation = annotation || (kindBefore.MatchString(s[:loc[2]]) && objectName.MatchString(key) && !sensitiveEnd.MatchString(key))
		// "token=<your API key>": a placeholder in angle brackets, words
		// and spaces (a credential has no spaces).
		placeholder := loc[8] >= 0 && s[loc[8]:loc[9]] == "<" && isPlaceholder(s[loc[9]:])
		skip := reference(key) || annotation || placeholder || imageCoordinate.MatchString(key) ||
			strings.HasPrefix(val, Mask) ||
			(spaceOnly && !apiKeyName.MatchString(key))
		if !skip && valEnd < len(s) && (s[valEnd] == ':' || s[valEnd] == '=') && keyValue.MatchString(s[valStart:valEnd+1]+"x") {
			// The "value" is the next key ("userToken: [token: v]"): scan
			// from it.
			b.WriteString(s[pos:valStart])
			pos = valStart
			continue
		}
		if !skip {
			// The regexp takes 64 bytes at most (so that a search never
			// runs over the whole line); the value goes on to its end,
			// across ':' and '=' ("user:pass", "a=b=c").
			for valEnd < len(s) {
				j := valEnd
				for j < len(s) && (s[j] == ':' || s[j] == '=') {
					j++
				}
				if j < len(s) && valueByte(s[j]) {
					for j < len(s) && valueByte(s[j]) {
						j++
					}
					valEnd = j
					continue
				}
				break
			}
			for n := 0; n < 2 && valEnd < len(s) && s[valEnd] == '='; n++ {
				valEnd++ // base64 padding
			}
		}
		if skip {
			// Rescan from just after the key's first character, so that a
			// sensitive key inside this candidate's value is still seen.
			next := loc[3]
			if !spaceOnly || reference(key) || annotation {
				next = loc[6] // after the separator
				if next < 0 || next <= loc[2] {
					next = loc[3]
				}
			}
			b.WriteString(s[pos:next])
			pos = next
			continue
		}
		b.WriteString(s[pos:valStart])
		b.WriteString(Mask)
		pos = valEnd
	}
	b.WriteString(s[pos:])
	return b.String()
}

// reference reports whether key names a Secret or a key in one rather than
// holding a credential: ...Ref, ...Name(s), existing..., camelCase ...Key
// (passwordKey, tokenKey) except apiKey, secretKey, accessKey, privateKey.
func reference(key string) bool {
	k := strings.ToLower(strings.TrimRight(key, `"' `))
	if i := strings.LastIndex(k, "."); i > 0 && strings.HasSuffix(k[:i], "ref") {
		// A field of a reference: secretKeyRef.key, secretKeyRef.name.
		return true
	}
	switch {
	case strings.HasSuffix(k, "ref"), strings.HasSuffix(k, "name"), strings.HasSuffix(k, "names"), strings.Contains(k, "existing"):
		return true
	case strings.HasSuffix(key, "Key") && !valueKeySuffix.MatchString(key):
		return true
	}
	return false
}

// isPlaceholder reports whether s (what follows a '<') is a placeholder
// such as "your Codefresh API key>": letters, digits, '-', '_' and spaces, at
// least one space, up to a '>' within 64 bytes.
func isPlaceholder(s string) bool {
	end := strings.IndexByte(s, '>')
	if end <= 0 || end > 64 {
		return false
	}
	body := s[:end]
	if !strings.Contains(body, " ") {
		return false
	}
	for _, c := range body {
		if c != ' ' && c != '-' && c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// valueByte reports whether c may be part of a value (what the keyValue
// value group takes, ':' and '=' aside).
func valueByte(c byte) bool {
	return !strings.ContainsRune(" \t\r\n\f\v\"',;{}[]()<>:=", rune(c))
}
