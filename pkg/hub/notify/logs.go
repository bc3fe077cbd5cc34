// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package notify

import (
	"fmt"
	"io"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sirupsen/logrus"
	"k8s.io/klog/v2"
)

// minSecretLength is the shortest value of the notifications Secret that is hidden
// from logs: shorter ones would hide ordinary words, and are no secret worth the name.
const minSecretLength = 4

// urlPattern finds URLs in a message, to show only their scheme and host.
var urlPattern = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)

// redactor hides what must never reach a log: the values of the notifications
// Secret, and the user, path and query of URLs (a Slack or Teams webhook URL is a
// credential in itself, even when written in the ConfigMap).
type redactor struct {
	// secretValues returns the values of the Secret as it is now.
	secretValues func() [][]byte
}

// redact returns s without the Secret's values and with every URL cut to its scheme
// and host.
func (r *redactor) redact(s string) string {
	// URLs first: a Secret's value hidden inside one would end it early.
	s = urlPattern.ReplaceAllStringFunc(s, func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return "<redacted URL>"
		}
		short := u.Scheme + "://" + u.Host
		if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			short += "/<redacted>"
		}
		return short
	})
	if r == nil || r.secretValues == nil {
		return s
	}
	values := r.secretValues()
	// The longest first, so that a value that holds another is hidden whole.
	sort.Slice(values, func(i, j int) bool { return len(values[i]) > len(values[j]) })
	for _, v := range values {
		if len(v) >= minSecretLength {
			s = strings.ReplaceAll(s, string(v), "<redacted>")
		}
	}
	return s
}

// engineLogs carries the engine's logs, which it writes with logrus's standard
// logger, into klog: errors as errors, warnings at -v=2, information at -v=4. Its
// debug logs are never turned on: they dump whole HTTP requests, credentials
// included. Every message goes through the redactor of the running controller.
type engineLogs struct {
	redactor atomic.Pointer[redactor]
}

// logs is the one bridge of the process: logrus's standard logger is global.
var (
	logs        = &engineLogs{}
	logsStarted sync.Once
)

// routeEngineLogs points logrus's standard logger at the bridge, once, with r as the
// redactor of every later message.
func routeEngineLogs(r *redactor) {
	logs.redactor.Store(r)
	logsStarted.Do(func() {
		std := logrus.StandardLogger()
		std.SetOutput(io.Discard)
		level := logrus.WarnLevel
		if klog.V(4).Enabled() {
			level = logrus.InfoLevel
		}
		std.SetLevel(level)
		std.ReplaceHooks(logrus.LevelHooks{})
		std.AddHook(logs)
	})
}

// Levels returns the levels the bridge carries: all of them, though the logger's
// level stops debug and trace before they are made.
func (*engineLogs) Levels() []logrus.Level { return logrus.AllLevels }

// Fire writes one of the engine's log entries to klog.
func (l *engineLogs) Fire(e *logrus.Entry) error {
	r := l.redactor.Load()
	msg := r.redact(e.Message)
	kv := make([]any, 0, 2*len(e.Data)+2)
	kv = append(kv, "component", "notifications-engine")
	keys := make([]string, 0, len(e.Data))
	for k := range e.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		// Every value as redacted text: an error or a request may hold a credential.
		kv = append(kv, k, r.redact(fmt.Sprint(e.Data[k])))
	}
	logger := klog.Background().WithName("notify")
	switch {
	case e.Level <= logrus.ErrorLevel:
		logger.Error(nil, msg, kv...)
	case e.Level == logrus.WarnLevel:
		logger.V(2).Info(msg, kv...)
	default:
		logger.V(4).Info(msg, kv...)
	}
	return nil
}
