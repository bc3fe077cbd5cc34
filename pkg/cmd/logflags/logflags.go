// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package logflags gives a command the logging flags of Kubernetes components, those
// of k8s.io/component-base's logs/api/v1 (-v, --vmodule, --logging-format text or
// json, --log-flush-frequency, and the formats' options), and applies them, with
// logsapi.ValidateAndApply, before the command runs.
//
// The logger it installs keeps credentials out of the log at any verbosity: client-go
// masks the Authorization header in its request lines (-v=7 and up), and this logger
// replaces the body of a Secret, or a list of them, that client-go logs with a request
// or a response (-v=8 and up) by a note, so that neither a token of a kubeconfig nor
// the data of a Secret is ever written.
package logflags

import (
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	logsapi "k8s.io/component-base/logs/api/v1"
	// The json format of --logging-format, one JSON object per line.
	_ "k8s.io/component-base/logs/json/register"
	"k8s.io/klog/v2"
)

func init() {
	// A process runs one command, which applies its configuration once; unit tests run
	// many commands in one process, with the same configuration.
	logsapi.ReapplyHandling = logsapi.ReapplyHandlingIgnoreUnchanged
}

// AddTo adds the logging flags to cmd's persistent flags, so that cmd and every
// command under it take them, and has cmd apply them (before its
// PersistentPreRunE, if it has one) with the log written to its error output.
func AddTo(cmd *cobra.Command) {
	c := logsapi.NewLoggingConfiguration()
	logsapi.AddFlags(c, cmd.PersistentFlags())
	next := cmd.PersistentPreRunE
	cmd.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if err := Apply(c, cmd.ErrOrStderr()); err != nil {
			return err
		}
		if next != nil {
			return next(cmd, args)
		}
		return nil
	}
}

// Apply validates the logging configuration c and applies it, writing the log to w,
// through a logger that keeps the bodies of Secrets out of it.
func Apply(c *logsapi.LoggingConfiguration, w io.Writer) error {
	if err := logsapi.ValidateAndApplyWithOptions(c, &logsapi.LoggingOptions{ErrorStream: w, InfoStream: w}, nil); err != nil {
		return fmt.Errorf("the logging flags: %w", err)
	}
	logger := klog.Background()
	if _, ok := logger.GetSink().(*redactingSink); !ok {
		klog.SetLoggerWithOptions(logr.New(newRedactingSink(logger.GetSink())), klog.ContextualLogger(true))
	}
	return nil
}

// redactingSink is the sink of another logger, whose values named "body" it redacts
// when they hold a Secret.
type redactingSink struct {
	sink logr.LogSink
}

// newRedactingSink wraps sink, one call deeper: the caller it reports is the caller of
// this sink's methods.
func newRedactingSink(sink logr.LogSink) *redactingSink {
	if cd, ok := sink.(logr.CallDepthLogSink); ok {
		sink = cd.WithCallDepth(1)
	}
	return &redactingSink{sink: sink}
}

// Init does nothing: the wrapped sink was initialized by its own logger.
func (s *redactingSink) Init(logr.RuntimeInfo) {}

func (s *redactingSink) Enabled(level int) bool { return s.sink.Enabled(level) }

func (s *redactingSink) Info(level int, msg string, keysAndValues ...any) {
	s.sink.Info(level, msg, redact(keysAndValues)...)
}

func (s *redactingSink) Error(err error, msg string, keysAndValues ...any) {
	s.sink.Error(err, msg, redact(keysAndValues)...)
}

func (s *redactingSink) WithValues(keysAndValues ...any) logr.LogSink {
	return &redactingSink{sink: s.sink.WithValues(redact(keysAndValues)...)}
}

func (s *redactingSink) WithName(name string) logr.LogSink {
	return &redactingSink{sink: s.sink.WithName(name)}
}

func (s *redactingSink) WithCallDepth(depth int) logr.LogSink {
	if cd, ok := s.sink.(logr.CallDepthLogSink); ok {
		return &redactingSink{sink: cd.WithCallDepth(depth)}
	}
	return s
}

// RedactedBody is what the log shows in place of the body of a Secret.
const RedactedBody = "<redacted: the body of a Secret>"

// redact returns keysAndValues with the value of each key "body" (client-go's request
// and response bodies) that holds a Secret replaced by RedactedBody; it copies the
// slice only when it changes one.
func redact(keysAndValues []any) []any {
	out, copied := keysAndValues, false
	for i := 0; i+1 < len(keysAndValues); i += 2 {
		if key, ok := keysAndValues[i].(string); !ok || key != "body" {
			continue
		}
		if body, ok := keysAndValues[i+1].(string); ok && holdsSecret(body) {
			if !copied {
				out, copied = append([]any(nil), keysAndValues...), true
			}
			out[i+1] = RedactedBody
		}
	}
	return out
}

// holdsSecret says whether body, as client-go logs it, is a Secret or a list of them:
// JSON as the API server writes it ({"kind":"Secret",...} or
// {"kind":"SecretList",...}), or a hex dump of protobuf, whose type names the kind.
func holdsSecret(body string) bool {
	if strings.Contains(body, `"kind":"Secret`) {
		return true
	}
	if !strings.HasPrefix(body, "00000000  ") {
		return false
	}
	// hex.Dump: an offset, then up to 16 bytes in hex in two groups, then |ASCII|.
	// The kind is at the start: the lines up to one that does not decode (the last
	// of a body that client-go truncated) are enough.
	var raw []byte
	for _, line := range strings.Split(body, "\n") {
		if len(line) < 10 {
			break
		}
		hexPart, _, _ := strings.Cut(line[10:], "|")
		b, err := hex.DecodeString(strings.Join(strings.Fields(hexPart), ""))
		if err != nil {
			break
		}
		raw = append(raw, b...)
	}
	// The kind is field 2 of the TypeMeta: tag 0x12, the length, the name.
	return strings.Contains(string(raw), "\x12\x06Secret") || strings.Contains(string(raw), "\x12\x0aSecretList")
}
