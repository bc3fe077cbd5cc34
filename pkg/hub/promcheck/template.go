// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
	"unicode/utf8"
)

// MaxRenderedQueryBytes bounds a query, or a trafficShare.clusterLabelValue, once its
// template is filled in.
const MaxRenderedQueryBytes = 16 << 10

// maxQuoted bounds the template text and the values that a template error quotes.
const maxQuoted = 64

// rawFunc is the internal function that render appends to every printed pipeline
// that does not end in quote. Templates cannot call it: the sandbox refuses it.
const rawFunc = "_raw"

// templateHint lists what a query template may use, for the sandbox's refusals.
const templateHint = "a query template may use fields of the documented data, index, quote, if/else and eq/ne/and/or/not"

// templateFuncs are the functions of a query template besides the builtins eq, ne,
// and, or and not. The sandbox refuses every other builtin.
var templateFuncs = template.FuncMap{"index": strictIndex, "quote": quote, rawFunc: rawValue}

// allowedFuncs are the functions a query template may call.
var allowedFuncs = map[string]bool{"index": true, "quote": true, "eq": true, "ne": true, "and": true, "or": true, "not": true}

// dataFields are the fields of QueryData a template may name.
var dataFields = map[string]bool{
	"Cluster.Name": true, "Cluster.Labels": true,
	"Gateway.Name": true, "Gateway.Namespace": true,
	"Policy.Name": true, "Policy.Namespace": true,
}

// templateError is a refusal of the sandbox, a value that cannot go into a query, or
// a query too long. Its message says what to change and is bounded by construction,
// so Run shows it whole.
type templateError struct{ msg string }

func (e *templateError) Error() string { return e.msg }

// errQueryTooLong is the error of the writer of render once the query passes
// MaxRenderedQueryBytes.
var errQueryTooLong = fmt.Errorf("the query is longer than %d bytes once its template is filled in", MaxRenderedQueryBytes)

// render executes text as the template name on data, within the sandbox: the
// template may only read the fields of QueryData and call the functions of
// allowedFuncs, so that its cost is linear in its size, and its output is bounded by
// MaxRenderedQueryBytes.
//
// Unless wholeQuoted (the caller quotes the output as one string literal), every
// value printed without quote must be a safe token (see safeToken), so that a label
// value reported by a spoke cannot change the structure of the query.
func render(name, text string, data QueryData, wholeQuoted bool) (string, error) {
	tmpl, err := template.New(name).Option("missingkey=error").Funcs(templateFuncs).Parse(text)
	if err != nil {
		return "", err
	}
	s := sandbox{name: name, text: text, wholeQuoted: wholeQuoted}
	if err := s.check(tmpl); err != nil {
		return "", err
	}
	var w cappedWriter
	if err := tmpl.Execute(&w, data); err != nil {
		var te *templateError
		switch {
		case errors.Is(err, errQueryTooLong):
			return "", &templateError{msg: name + ": " + errQueryTooLong.Error()}
		case errors.As(err, &te):
			return "", &templateError{msg: name + ": " + te.msg}
		}
		return "", err
	}
	return w.b.String(), nil
}

// sandbox checks the parse tree of a query template against the allowlist of
// constructs, and rewrites its printed pipelines to check their values.
type sandbox struct {
	name, text  string
	wholeQuoted bool
}

// check refuses a template that defines other templates (naming the first, so that
// the message is the same at each check), then walks its tree.
func (s *sandbox) check(tmpl *template.Template) error {
	var first parse.Node
	for _, t := range tmpl.Templates() {
		if t != tmpl && t.Tree != nil && t.Tree.Root != nil && (first == nil || t.Tree.Root.Pos < first.Position()) {
			first = t.Tree.Root
		}
	}
	if first != nil || len(tmpl.Templates()) > 1 {
		if first == nil {
			first = &parse.TextNode{}
		}
		return s.refuse(first, "{{define}} (or {{block}})")
	}
	if tmpl.Tree == nil {
		return nil
	}
	return s.list(tmpl.Tree.Root)
}

func (s *sandbox) list(l *parse.ListNode) error {
	if l == nil {
		return nil
	}
	for i, n := range l.Nodes {
		if err := s.node(n); err != nil {
			return err
		}
		if a, ok := n.(*parse.ActionNode); ok && !s.wholeQuoted && endsInQuote(a.Pipe) && betweenQuotes(l.Nodes, i) {
			return &templateError{msg: fmt.Sprintf("%s: quote writes the string's quotes itself (%s); remove the quotes around {{ %s }}",
				s.name, s.at(a), bounded(a.Pipe.String()))}
		}
	}
	return nil
}

// betweenQuotes says whether the text next to nodes[i] ends or starts with a quote
// character: what quote writes would then close a string literal of the template and
// the value would be read outside it, as PromQL.
func betweenQuotes(nodes []parse.Node, i int) bool {
	isQuote := func(c byte) bool { return c == '"' || c == '\'' || c == '`' }
	if i > 0 {
		if t, ok := nodes[i-1].(*parse.TextNode); ok {
			if s := strings.TrimRight(string(t.Text), " \t"); s != "" && isQuote(s[len(s)-1]) {
				return true
			}
		}
	}
	if i+1 < len(nodes) {
		if t, ok := nodes[i+1].(*parse.TextNode); ok {
			if s := strings.TrimLeft(string(t.Text), " \t"); s != "" && isQuote(s[0]) {
				return true
			}
		}
	}
	return false
}

func (s *sandbox) node(n parse.Node) error {
	switch n := n.(type) {
	case *parse.TextNode, *parse.CommentNode:
		return nil
	case *parse.ListNode:
		return s.list(n)
	case *parse.ActionNode:
		if err := s.pipe(n.Pipe); err != nil {
			return err
		}
		if !s.wholeQuoted && !endsInQuote(n.Pipe) {
			checkPrinted(n.Pipe)
		}
		return nil
	case *parse.IfNode:
		if err := s.pipe(n.Pipe); err != nil {
			return err
		}
		if err := s.list(n.List); err != nil {
			return err
		}
		return s.list(n.ElseList)
	case *parse.RangeNode:
		return s.refuse(n, "{{range}}")
	case *parse.WithNode:
		return s.refuse(n, "{{with}}")
	case *parse.TemplateNode:
		return s.refuse(n, "{{template}} (or {{block}})")
	case *parse.BreakNode:
		return s.refuse(n, "{{break}}")
	case *parse.ContinueNode:
		return s.refuse(n, "{{continue}}")
	}
	return s.refuse(n, bounded(n.String()))
}

func (s *sandbox) pipe(p *parse.PipeNode) error {
	if p == nil {
		return nil
	}
	if len(p.Decl) > 0 {
		return s.refuse(p, "a variable ("+bounded(p.Decl[0].String())+" :=)")
	}
	for _, cmd := range p.Cmds {
		for _, arg := range cmd.Args {
			if err := s.arg(arg); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *sandbox) arg(n parse.Node) error {
	switch n := n.(type) {
	case *parse.StringNode, *parse.NumberNode, *parse.BoolNode:
		return nil
	case *parse.PipeNode:
		return s.pipe(n)
	case *parse.FieldNode:
		id := n.Ident
		if len(id) == 2 && dataFields[id[0]+"."+id[1]] || len(id) == 3 && id[0] == "Cluster" && id[1] == "Labels" {
			return nil
		}
		return &templateError{msg: fmt.Sprintf("%s: %s is not a field of the query data (%s); the fields are .Cluster.Name, .Cluster.Labels, .Gateway.Name, .Gateway.Namespace, .Policy.Name and .Policy.Namespace",
			s.name, bounded(n.String()), s.at(n))}
	case *parse.IdentifierNode:
		if n.Ident == "quote" && s.wholeQuoted {
			return &templateError{msg: fmt.Sprintf("%s: quote is not needed here (%s): the value is always quoted; remove | quote", s.name, s.at(n))}
		}
		if allowedFuncs[n.Ident] {
			return nil
		}
		return s.refuse(n, "the function "+bounded(n.Ident))
	case *parse.VariableNode:
		return s.refuse(n, "the variable "+bounded(n.String()))
	case *parse.DotNode:
		return s.refuse(n, "the dot (.) alone")
	case *parse.NilNode:
		return s.refuse(n, "nil")
	case *parse.ChainNode:
		return s.refuse(n, "a field of a computed value ("+bounded(n.String())+")")
	}
	return s.refuse(n, bounded(n.String()))
}

// refuse is the error of a construct the sandbox does not allow.
func (s *sandbox) refuse(n parse.Node, what string) error {
	return &templateError{msg: fmt.Sprintf("%s: %s is not allowed in a query template (%s); %s", s.name, what, s.at(n), templateHint)}
}

// at is the position of n as text/template's own errors count it: the line from 1,
// the byte in the line from 0.
func (s *sandbox) at(n parse.Node) string {
	pos := min(max(int(n.Position()), 0), len(s.text))
	before := s.text[:pos]
	return fmt.Sprintf("line %d, col %d", 1+strings.Count(before, "\n"), pos-(strings.LastIndex(before, "\n")+1))
}

// endsInQuote says whether the value p prints is the result of quote.
func endsInQuote(p *parse.PipeNode) bool {
	if len(p.Cmds) == 0 {
		return false
	}
	last := p.Cmds[len(p.Cmds)-1]
	if len(last.Args) == 0 {
		return false
	}
	id, ok := last.Args[0].(*parse.IdentifierNode)
	return ok && id.Ident == "quote"
}

// checkPrinted appends `| _raw "<p>"` to the printed pipeline p, so that the value
// goes through rawValue before it is printed.
func checkPrinted(p *parse.PipeNode) {
	text := p.String()
	p.Cmds = append(p.Cmds, &parse.CommandNode{NodeType: parse.NodeCommand, Pos: p.Pos, Args: []parse.Node{
		parse.NewIdentifier(rawFunc).SetPos(p.Pos),
		&parse.StringNode{NodeType: parse.NodeString, Pos: p.Pos, Quoted: strconv.Quote(text), Text: text},
	}})
}

// rawValue lets value, printed by the pipeline whose text is pipe, through when it
// is a safe token, and fails otherwise.
func rawValue(pipe string, value any) (string, error) {
	v := fmt.Sprint(value)
	if safeToken(v) {
		return v, nil
	}
	example := "{{ ... | quote }}"
	if len(pipe) <= maxQuoted {
		example = "{{ " + pipe + " | quote }}"
	}
	return "", &templateError{msg: fmt.Sprintf("the value %s of %s cannot be used unquoted in a query; pipe it to quote: %s",
		quoteBounded(v), bounded(pipe), example)}
}

// safeToken says whether v can be printed into a query as it is: only ASCII
// letters, digits and _ . : - / @ +, none of which ends a string literal, a label
// matcher or a selector, or starts a comment.
func safeToken(v string) bool {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("_.:-/@+", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// quote is the template function quote: s as one PromQL string literal.
func quote(s string) (string, error) {
	q, err := promQuote(s)
	if err != nil {
		return "", &templateError{msg: "quote: " + err.Error()}
	}
	return q, nil
}

// promQuote returns s as a PromQL double-quoted string literal that reads back as s.
// PromQL's string literals take Go's escapes, and strconv.Quote escapes the
// backslash, the double quote and every control or non-printable character. Two
// differences are handled: PromQL's lexer refuses a literal U+FFFD (it takes it for
// a decoding error), so it is escaped; and a string that is not valid UTF-8 is
// refused, since no label value of Prometheus can equal it.
func promQuote(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("the value %s is not valid UTF-8, which no Prometheus label value is", quoteBounded(s))
	}
	return strings.ReplaceAll(strconv.Quote(s), "\uFFFD", `\uFFFD`), nil
}

// bounded cuts s to maxQuoted bytes, at a character boundary, marking the cut.
func bounded(s string) string {
	if len(s) <= maxQuoted {
		return s
	}
	return s[:runeCut(s, maxQuoted)] + "..."
}

// quoteBounded quotes s in Go syntax, cut to maxQuoted bytes first.
func quoteBounded(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:runeCut(s, maxQuoted)]) + "..."
}

// runeCut is the largest cut of s at most n bytes long that splits no character
// (of valid UTF-8; invalid bytes are cut anywhere).
func runeCut(s string, n int) int {
	for cut := n; cut > n-utf8.UTFMax && cut > 0; cut-- {
		if isRuneStart(s[cut]) {
			return cut
		}
	}
	return n
}

// cappedWriter keeps what is written, failing with errQueryTooLong once it would
// hold more than MaxRenderedQueryBytes.
type cappedWriter struct{ b strings.Builder }

func (w *cappedWriter) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > MaxRenderedQueryBytes {
		return 0, errQueryTooLong
	}
	return w.b.Write(p)
}
