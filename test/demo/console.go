// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// console writes the demo's output: steps of the set-up stamped with the time since
// the start, and after the move (or just before it) lines stamped t±seconds from the
// move. It is safe for concurrent use, so components write their events as they
// happen.
type console struct {
	mu     sync.Mutex
	w      io.Writer
	start  time.Time
	moveAt time.Time // zero until the move is scheduled
}

func newConsole(w io.Writer) *console {
	return &console{w: w, start: time.Now()}
}

// scheduleMove makes stamps relative to the move at t.
func (c *console) scheduleMove(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.moveAt = t
}

// sinceMove is the time since the move; negative before it.
func (c *console) sinceMove(now time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return now.Sub(c.moveAt)
}

func (c *console) stampLocked(now time.Time) string {
	if c.moveAt.IsZero() {
		return fmt.Sprintf("[%5.1fs]", now.Sub(c.start).Seconds())
	}
	return fmt.Sprintf("%-8s", fmt.Sprintf("t%+.1fs", now.Sub(c.moveAt).Seconds()))
}

// step prints a line of the set-up or of the scenario, stamped.
func (c *console) step(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.w, "%s %s\n", c.stampLocked(time.Now()), fmt.Sprintf(format, args...))
}

// event prints something that happened in the fleet, stamped and marked.
func (c *console) event(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.w, "%s   >> %s\n", c.stampLocked(time.Now()), fmt.Sprintf(format, args...))
}

// text prints lines as they are, indented by indent.
func (c *console) text(indent, s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if line == "" {
			fmt.Fprintln(c.w)
			continue
		}
		fmt.Fprintln(c.w, indent+line)
	}
}

// block prints lines, the first stamped, as one unit among concurrent writers.
func (c *console) block(lines []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	stamp := c.stampLocked(time.Now())
	for i, line := range lines {
		if i > 0 {
			stamp = strings.Repeat(" ", len(stamp))
		}
		fmt.Fprintf(c.w, "%s %s\n", stamp, line)
	}
}

// textWidth is the width the demo's prose is wrapped to.
const textWidth = 92

// paragraph prints text wrapped to textWidth, its first line after first and the
// others after rest (for example "  - " and "    " for a list item).
func (c *console) paragraph(first, rest, text string) {
	c.text("", wrap(text, textWidth, first, rest))
}

// wrap breaks text into lines of at most width characters, prefixes included, at
// spaces; a longer word gets a line of its own.
func wrap(text string, width int, first, rest string) string {
	var b strings.Builder
	line := first
	empty := true
	for _, word := range strings.Fields(text) {
		if !empty && len(line)+1+len(word) > width {
			b.WriteString(line + "\n")
			line, empty = rest, true
		}
		if !empty {
			line += " "
		}
		line += word
		empty = false
	}
	b.WriteString(line + "\n")
	return b.String()
}
