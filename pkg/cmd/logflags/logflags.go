// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package logflags gives a command klog's flags (-v, --vmodule, ...) and
// --logging-format: text (klog's own lines) or json, one JSON object per line as
// Kubernetes components write with k8s.io/component-base's JSON format.
package logflags

import (
	goflag "flag"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"
	"go.uber.org/zap/zapcore"
	logsapi "k8s.io/component-base/logs/api/v1"
	logsjson "k8s.io/component-base/logs/json"
	"k8s.io/klog/v2"
)

// Formats are the values of --logging-format.
const (
	FormatText = "text"
	FormatJSON = "json"
)

// Options are a command's logging flags.
type Options struct {
	cmd    *cobra.Command
	format string
}

// Add adds klog's flags and --logging-format to cmd. The command's RunE calls Apply
// first.
func Add(cmd *cobra.Command) *Options {
	fs := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(fs)
	cmd.Flags().AddGoFlagSet(fs)
	o := &Options{cmd: cmd, format: FormatText}
	cmd.Flags().StringVar(&o.format, "logging-format", o.format,
		"how logs are written: text (klog's lines) or json (one JSON object per line, as Kubernetes components write it)")
	return o
}

// Apply makes klog write in the chosen format to w (the command's error output):
// text leaves klog as it is; json routes klog, and the loggers taken from contexts,
// through component-base's JSON logger at the verbosity of -v.
func (o *Options) Apply(w io.Writer) error {
	switch o.format {
	case FormatText:
		return nil
	case FormatJSON:
		v := 0
		if f := o.cmd.Flags().Lookup("v"); f != nil {
			n, err := strconv.Atoi(f.Value.String())
			if err != nil {
				return fmt.Errorf("-v=%q: %w", f.Value.String(), err)
			}
			v = n
		}
		logger, control := logsjson.NewJSONLogger(logsapi.VerbosityLevel(v), zapcore.AddSync(w), nil, nil)
		klog.SetLoggerWithOptions(logger, klog.ContextualLogger(true), klog.FlushLogger(control.Flush))
		return nil
	}
	return fmt.Errorf("--logging-format=%q: want %s or %s", o.format, FormatText, FormatJSON)
}
