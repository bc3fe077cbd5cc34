// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	v1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

func TestSandboxRefuses(t *testing.T) {
	const hint = "; a query template may use fields of the documented data, index, quote, if/else and eq/ne/and/or/not"
	tests := map[string]string{ // template: the error
		`x{{ range .Cluster.Labels }}y{{ end }}`:               `metricsQuery: {{range}} is not allowed in a query template (line 1, col 10)` + hint,
		"a\nb{{ with .Cluster }}{{ .Name }}{{ end }}":          `metricsQuery: {{with}} is not allowed in a query template (line 2, col 9)` + hint,
		`{{ template "x" }}`:                                   `metricsQuery: {{template}} (or {{block}}) is not allowed in a query template`,
		`{{ define "x" }}up{{ end }}{{ .Cluster.Name }}`:       `metricsQuery: {{define}} (or {{block}}) is not allowed in a query template`,
		`{{ block "x" .Cluster.Name }}up{{ end }}`:             `metricsQuery: {{define}} (or {{block}}) is not allowed in a query template`,
		`{{ $x := .Cluster.Name }}{{ $x }}`:                    `metricsQuery: a variable ($x :=) is not allowed in a query template (line 1, col 3)`,
		`{{ if $x := .Cluster.Name }}a{{ end }}`:               `metricsQuery: a variable ($x :=) is not allowed`,
		`{{ $ }}`:                                              `metricsQuery: the variable $ is not allowed`,
		`{{ eq $.Cluster.Name "a" }}`:                          `metricsQuery: the variable $.Cluster.Name is not allowed`,
		`{{ . }}`:                                              `metricsQuery: the dot (.) alone is not allowed`,
		`{{ eq nil "a" }}`:                                     `metricsQuery: nil is not allowed`,
		`{{ (index .Cluster.Labels "cluster").x }}`:            `metricsQuery: a field of a computed value ((index .Cluster.Labels "cluster").x) is not allowed`,
		`{{ printf "%s" .Cluster.Name }}`:                      `metricsQuery: the function printf is not allowed in a query template (line 1, col 3)` + hint,
		`{{ .Cluster.Name | print }}`:                          `the function print is not allowed`,
		`{{ println }}`:                                        `the function println is not allowed`,
		`{{ len .Cluster.Labels }}`:                            `the function len is not allowed`,
		`{{ slice .Cluster.Name 1 }}`:                          `the function slice is not allowed`,
		`{{ call .Cluster.Name }}`:                             `the function call is not allowed`,
		`{{ html .Cluster.Name }}`:                             `the function html is not allowed`,
		`{{ js .Cluster.Name }}`:                               `the function js is not allowed`,
		`{{ urlquery .Cluster.Name }}`:                         `the function urlquery is not allowed`,
		`{{ if lt 1 2 }}a{{ end }}`:                            `the function lt is not allowed`,
		`{{ if eq .Cluster.Name (printf "a") }}a{{ end }}`:     `the function printf is not allowed`,
		`{{ if true }}{{ else }}{{ printf "a" }}{{ end }}`:     `the function printf is not allowed`,
		`{{ _raw "x" .Cluster.Name }}`:                         `the function _raw is not allowed`,
		`{{ .Cluster.Foo }}`:                                   `metricsQuery: .Cluster.Foo is not a field of the query data (line 1, col 11); the fields are .Cluster.Name, .Cluster.Labels, .Gateway.Name, .Gateway.Namespace, .Policy.Name and .Policy.Namespace`,
		`{{ .Cluster }}`:                                       `.Cluster is not a field of the query data`,
		`{{ index .Policy "Name" }}`:                           `.Policy is not a field of the query data`,
		`{{ .Cluster.Labels.cluster.x }}`:                      `.Cluster.Labels.cluster.x is not a field of the query data`,
		`{{ .Gateway.Name.Len }}`:                              `.Gateway.Name.Len is not a field of the query data`,
		`{{ eq .Policy.Name .Secret }}`:                        `.Secret is not a field of the query data`,
		`{{ define "a" }}x{{ end }}{{ define "b" }}y{{ end }}`: `metricsQuery: {{define}} (or {{block}}) is not allowed in a query template (line 1, col 16)`,
		`{{ define "metricsQuery" }}{{ printf "x" }}{{ end }}`: `the function printf is not allowed`,
		`{{ eq ($x := "a") "a" }}`:                             `a variable ($x :=) is not allowed`,
		`x{c="{{ index .Cluster.Labels "cluster" | quote }}"}`: `metricsQuery: quote writes the string's quotes itself (line 1, col 8); remove the quotes around {{ index .Cluster.Labels "cluster" | quote }}`,
		`x{c=' {{ quote .Cluster.Name }}'}`:                    `quote writes the string's quotes itself`,
		"x{c={{ quote .Cluster.Name }} `}":                     `quote writes the string's quotes itself`,
		`{{ nope }}`:                                           `function "nope" not defined`,
		`{{ index .Cluster.Labels "a" | quote | printf "x" }}`: `the function printf is not allowed`,
	}
	for text, want := range tests {
		t.Run(text, func(t *testing.T) {
			got, err := render("metricsQuery", text, testData(), false)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("want an error containing\n%s\ngot %v (query %q)", want, err, got)
			}
		})
	}
}

func TestSandboxAllows(t *testing.T) {
	tests := map[string]string{ // template: the query
		`{{ if eq (index .Cluster.Labels "cluster") "us-east-1" }}a{{ else if ne .Cluster.Name "x" }}b{{ else }}c{{ end }}`: "a",
		`{{ if and (eq .Gateway.Name "x") true }}a{{ else if not (eq .Cluster.Name "x") }}b{{ end }}`:                       "b",
		`{{ or (index .Cluster.Labels "cluster") "x" | quote }}`:                                                            `"us-east-1"`,
		`{{ quote .Cluster.Name }}`:                        `"cluster1"`,
		`{{/* a comment */}}{{ .Cluster.Labels.cluster }}`: "us-east-1",
		`{{- .Policy.Namespace -}} / {{ .Policy.Name }}`:   "policies/ example-traffic-migration",
		`{{ 5 }} {{ 1.5 }} {{ -2 }} {{ true }} {{ "a" }}`:  "5 1.5 -2 true a",
		`{{ (.Gateway.Namespace) }}`:                       "gateway-system",
		`up`:                                               "up",
		``:                                                 "",
	}
	for text, want := range tests {
		t.Run(text, func(t *testing.T) {
			got, err := render("metricsQuery", text, testData(), false)
			if err != nil || got != want {
				t.Errorf("want %q, got %q, %v", want, got, err)
			}
		})
	}
}

// A value printed without quote is either a plain token or an error.
func TestRenderRawValues(t *testing.T) {
	data := func(v string) QueryData {
		d := testData()
		d.Cluster.Labels["cluster"] = v
		return d
	}
	for _, v := range []string{"us-east-1", "a.b:c/d@e+f_G9", ""} {
		got, err := render("metricsQuery", `{{ index .Cluster.Labels "cluster" }}`, data(v), false)
		if err != nil || got != v {
			t.Errorf("plain value %q: %q, %v", v, got, err)
		}
	}
	tests := map[string]struct{ text, value, want string }{
		"index": {`up{c="{{ index .Cluster.Labels "cluster" }}"}`, `a"} or vector(1) #`,
			`metricsQuery: the value "a\"} or vector(1) #" of index .Cluster.Labels "cluster" cannot be used unquoted in a query; pipe it to quote: {{ index .Cluster.Labels "cluster" | quote }}`},
		"field": {`{{ .Cluster.Labels.cluster }}`, "a b",
			`metricsQuery: the value "a b" of .Cluster.Labels.cluster cannot be used unquoted in a query; pipe it to quote: {{ .Cluster.Labels.cluster | quote }}`},
		"long value": {`{{ index .Cluster.Labels "cluster" }}`, strings.Repeat("é", 40),
			`metricsQuery: the value "` + strings.Repeat("é", 32) + `"... of index`},
		"inside if":                   {`{{ if true }}{{ index .Cluster.Labels "cluster" }}{{ end }}`, "{", `the value "{" of index`},
		"quoted, then something else": {`{{ (quote .Cluster.Labels.cluster) }}`, "a", `the value "\"a\"" of (quote .Cluster.Labels.cluster) cannot be used unquoted`},
		"or":                          {`{{ or (index .Cluster.Labels "cluster") "x" }}`, "#", `the value "#" of or (index .Cluster.Labels "cluster") "x" cannot`},
		"long pipeline": {`{{ or (index .Cluster.Labels "cluster") "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" }}`, "#",
			`xx... cannot be used unquoted in a query; pipe it to quote: {{ ... | quote }}`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := render("metricsQuery", tc.text, data(tc.value), false)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want an error containing\n%s\ngot %v (query %q)", tc.want, err, got)
			}
		})
	}
}

// No label value changes the structure of a query: it is refused, or it is one string
// literal of the query, exactly.
func TestQueryInjection(t *testing.T) {
	tests := map[string]struct {
		value string
		// literal is the value as a PromQL string literal; empty when it is refused.
		literal string
	}{
		"double quote":      {`a"} or vector(1) #`, `"a\"} or vector(1) #"`},
		"backslash":         {`a\`, `"a\\"`},
		"escaped quote":     {`\"`, `"\\\""`},
		"brace":             {`}`, `"}"`},
		"or vector":         {`) or vector(1)`, `") or vector(1)"`},
		"newline":           {"a\n} or vector(1)", `"a\n} or vector(1)"`},
		"carriage return":   {"a\r", `"a\r"`},
		"comment":           {"# x", `"# x"`},
		"unicode":           {"日本-é", `"日本-é"`},
		"line separator":    {"a\u2028b", `"a\u2028b"`},
		"replacement char":  {"a\uFFFDb", `"a\uFFFDb"`},
		"control":           {"a\x00\x1b\x7f", `"a\x00\x1b\x7f"`},
		"backtick and tick": {"`'", "\"`'\""},
		"invalid UTF-8":     {"a\xffb", ""},
		"lone surrogate":    {"\xed\xa0\x80", ""},
	}
	metricsQuery := func(text string) *v1alpha1.TrafficMigrationPolicySpec {
		return &v1alpha1.TrafficMigrationPolicySpec{MetricsQuery: text, ExpectedMetricsResult: "0"}
	}
	forms := map[string]struct {
		spec *v1alpha1.TrafficMigrationPolicySpec
		// query is the query around the literal; empty when the form refuses every
		// value that is not a plain token.
		before, after string
	}{
		"metricsQuery, unquoted": {spec: metricsQuery(`x{cluster="{{ index .Cluster.Labels "cluster" }}"}`)},
		"metricsQuery, field":    {spec: metricsQuery(`x{cluster="{{ .Cluster.Labels.cluster }}"}`)},
		"metricsQuery, quoted": {spec: metricsQuery(`x{cluster={{ index .Cluster.Labels "cluster" | quote }}} > 0`),
			before: "x{cluster=", after: "} > 0"},
		"metricsQuery, quote call": {spec: metricsQuery(`sum(x{cluster={{ quote .Cluster.Labels.cluster }},a="b"})`),
			before: "sum(x{cluster=", after: `,a="b"})`},
		"clusterLabelValue": {
			spec: &v1alpha1.TrafficMigrationPolicySpec{TrafficShare: &v1alpha1.TrafficShare{
				Metric: "m", ClusterLabel: "cluster", ClusterLabelValue: `{{ index .Cluster.Labels "cluster" }}`, Window: "5m"}},
			before: "100 * sum(rate(m{cluster=", after: "}[5m])) / sum(rate(m[5m]))"},
		"clusterLabelValue with text around": {
			spec: &v1alpha1.TrafficMigrationPolicySpec{TrafficShare: &v1alpha1.TrafficShare{
				Metric: "m", ClusterLabel: "cluster", ClusterLabelValue: `{{ index .Cluster.Labels "cluster" }}`, Selector: `a="b"`, Window: "5m"}},
			before: "100 * sum(rate(m{cluster=", after: `,a="b"}[5m])) / sum(rate(m{a="b"}[5m]))`},
	}
	for vname, v := range tests {
		if v.literal != "" && !promqlString(v.literal) {
			t.Errorf("%s: the expected literal %s is not a PromQL string", vname, v.literal)
		}
		for fname, form := range forms {
			t.Run(fname+"/"+vname, func(t *testing.T) {
				data := testData()
				data.Cluster.Labels["cluster"] = v.value
				got, err := ResolveQuery(form.spec, data)
				if form.before == "" || v.literal == "" {
					if err == nil {
						t.Fatalf("want the value refused, got the query %q", got)
					}
					if msg := err.Error(); !strings.Contains(msg, "cannot be used unquoted") && !strings.Contains(msg, "not valid UTF-8") {
						t.Errorf("want the value refused, got %v", err)
					}
					return
				}
				if want := form.before + v.literal + form.after; err != nil || got != want {
					t.Errorf("\nwant %s\ngot  %s (%v)", want, got, err)
				}
			})
		}
	}
}

// The renderer never writes more than MaxRenderedQueryBytes.
func TestRenderBoundsTheQuery(t *testing.T) {
	data := testData()
	data.Cluster.Labels["big"] = strings.Repeat("a", MaxRenderedQueryBytes)
	tests := map[string]struct {
		name, text string
		quoted     bool
		wantErr    string
	}{
		"exactly the bound":  {name: "metricsQuery", text: strings.Repeat("a", MaxRenderedQueryBytes)},
		"one byte more":      {name: "metricsQuery", text: strings.Repeat("a", MaxRenderedQueryBytes+1), wantErr: "metricsQuery: the query is longer than 16384 bytes once its template is filled in"},
		"a large value":      {name: "metricsQuery", text: `{{ index .Cluster.Labels "big" | quote }}`, wantErr: "metricsQuery: the query is longer than 16384 bytes"},
		"a large raw value":  {name: "metricsQuery", text: `x{{ index .Cluster.Labels "big" }}`, wantErr: "metricsQuery: the query is longer than 16384 bytes"},
		"clusterLabelValue":  {name: "trafficShare.clusterLabelValue", text: `{{ index .Cluster.Labels "big" }}x`, quoted: true, wantErr: "trafficShare.clusterLabelValue: the query is longer than 16384 bytes"},
		"a value at the end": {name: "metricsQuery", text: `{{ index .Cluster.Labels "big" }}`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := render(tc.name, tc.text, data, tc.quoted)
			if tc.wantErr == "" {
				if err != nil || len(got) != MaxRenderedQueryBytes {
					t.Errorf("want %d bytes, got %d, %v", MaxRenderedQueryBytes, len(got), err)
				}
				return
			}
			if err == nil || err.Error() != tc.wantErr && !strings.HasPrefix(err.Error(), tc.wantErr) {
				t.Errorf("want %q, got %v (%d bytes)", tc.wantErr, err, len(got))
			}
		})
	}
}

// The query trafficShare builds is bounded too, escapes included.
func TestTrafficShareQueryIsBounded(t *testing.T) {
	spec := &v1alpha1.TrafficMigrationPolicySpec{TrafficShare: &v1alpha1.TrafficShare{
		Metric: "m", ClusterLabel: "cluster", ClusterLabelValue: `{{ index .Cluster.Labels "cluster" }}`, Window: "5m"}}
	data := testData()
	data.Cluster.Labels["cluster"] = strings.Repeat("\x00", MaxRenderedQueryBytes/4)
	q, err := ResolveQuery(spec, data)
	const want = "trafficShare: the query is longer than 16384 bytes once its template is filled in"
	if err == nil || err.Error() != want {
		t.Errorf("want %q, got %v (%d bytes)", want, err, len(q))
	}
}

func TestQuoteIsNotNeededInClusterLabelValue(t *testing.T) {
	spec := &v1alpha1.TrafficMigrationPolicySpec{TrafficShare: &v1alpha1.TrafficShare{
		Metric: "m", ClusterLabel: "cluster", ClusterLabelValue: `{{ index .Cluster.Labels "cluster" | quote }}`, Window: "5m"}}
	_, err := ResolveQuery(spec, testData())
	const want = "trafficShare.clusterLabelValue: quote is not needed here (line 1, col 37): the value is always quoted; remove | quote"
	if err == nil || err.Error() != want {
		t.Errorf("want %q, got %v", want, err)
	}
}

// FuzzRenderQuery checks that whatever a spoke reports as a label value, the quoted
// form of a template keeps the author's structure: one string literal that PromQL
// reads back as the value.
func FuzzRenderQuery(f *testing.F) {
	for _, seed := range []string{"us-east-1", "", `a"b`, `a\b`, "}", ") or vector(1)", "a\nb", "#", "日本", "\uFFFD", "\xff", "\x00", "\u2028", `\u0041`, `"}} {{`} {
		f.Add(seed)
	}
	const before, after = `x{cluster="`, `"}`
	f.Fuzz(func(t *testing.T, value string) {
		data := testData()
		data.Cluster.Labels["cluster"] = value
		got, err := render("metricsQuery", `x{cluster={{ index .Cluster.Labels "cluster" | quote }}}`, data, false)
		if err != nil {
			if utf8.ValidString(value) && len(value) < MaxRenderedQueryBytes/8 {
				t.Fatalf("value %q: %v", value, err)
			}
			return
		}
		if !strings.HasPrefix(got, before) || !strings.HasSuffix(got, after) || len(got) < len(before)+len(after) {
			t.Fatalf("value %q: the query %q is not x{cluster=\"...\"}", value, got)
		}
		literal := got[len(before)-1 : len(got)-len(after)+1]
		if back, err := strconv.Unquote(literal); err != nil || back != value {
			t.Fatalf("value %q: the literal %s reads back as %q, %v", value, literal, back, err)
		}
		if !promqlString(literal) {
			t.Fatalf("value %q: PromQL's lexer would not read the literal %s", value, literal)
		}
	})
}

// promqlString says whether literal is one double-quoted string as PromQL's lexer
// reads it (lexString and lexEscape of promql/parser/lex.go): no raw newline or
// double quote inside; Go's escapes, with \' refused; numeric escapes of a valid
// code point; and no U+FFFD, which the lexer reads as a decoding error even when it
// is a valid character, nor invalid UTF-8.
func promqlString(literal string) bool {
	if len(literal) < 2 || literal[0] != '"' || literal[len(literal)-1] != '"' {
		return false
	}
	body := literal[1 : len(literal)-1]
	for i := 0; i < len(body); {
		r, w := utf8.DecodeRuneInString(body[i:])
		switch r {
		case utf8.RuneError, '\n', '"':
			return false
		case '\\':
		default:
			i += w
			continue
		}
		i++
		if i >= len(body) {
			return false
		}
		var n, base int
		var maxValue uint64
		switch c := body[i]; {
		case strings.IndexByte(`abfnrtv\"`, c) >= 0:
			i++
			continue
		case '0' <= c && c <= '7':
			n, base, maxValue = 3, 8, 255
		case c == 'x':
			i, n, base, maxValue = i+1, 2, 16, 255
		case c == 'u':
			i, n, base, maxValue = i+1, 4, 16, unicode.MaxRune
		case c == 'U':
			i, n, base, maxValue = i+1, 8, 16, unicode.MaxRune
		default:
			return false
		}
		if i+n > len(body) || strings.ContainsAny(body[i:i+n], "+-_") {
			return false
		}
		x, err := strconv.ParseUint(body[i:i+n], base, 32)
		if err != nil || x > maxValue || 0xD800 <= x && x < 0xE000 {
			return false
		}
		i += n
	}
	return true
}
