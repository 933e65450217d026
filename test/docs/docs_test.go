// Package docs checks the user documentation, README.md and docs/: its
// relative links lead somewhere, its liqoctl command lines are commands
// liqoctl has, and it documents the system, not how it was developed. Pure
// Go and fast: no cluster, nothing run.
package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/playground"
)

// root is the repository's root, from this package's directory.
const root = "../.."

// readmeMaxLines bounds the README: the details belong in docs/.
const readmeMaxLines = 250

// page is a Markdown file of the documentation.
type page struct {
	path string // slash-separated, relative to the root
	text string
}

// lines returns the page's lines, with whether each is inside a fenced
// code block (fence lines included) and the info string of that block.
func (p page) lines() []line {
	var out []line
	fence, info := "", ""
	for i, l := range strings.Split(p.text, "\n") {
		trimmed := strings.TrimSpace(l)
		switch {
		case fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
			fence, info = trimmed[:3], ""
			if f := strings.Fields(strings.TrimLeft(trimmed, "`~")); len(f) > 0 {
				info = f[0]
			}
			out = append(out, line{n: i + 1, text: l, code: true, fence: true, info: info})
		case fence != "" && strings.HasPrefix(trimmed, fence):
			out = append(out, line{n: i + 1, text: l, code: true, fence: true, info: info})
			fence, info = "", ""
		default:
			out = append(out, line{n: i + 1, text: l, code: fence != "", info: info})
		}
	}
	return out
}

type line struct {
	n     int
	text  string
	code  bool   // inside a fenced block
	fence bool   // the fence itself
	info  string // the block's language
}

// pages returns README.md and every Markdown file under docs/.
func pages(t *testing.T) []page {
	t.Helper()
	var paths []string
	paths = append(paths, "README.md")
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			paths = append(paths, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []page
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page{path: p, text: string(b)})
	}
	if len(out) < 10 {
		t.Fatalf("found %d pages: expected README.md and docs/", len(out))
	}
	return out
}

// handWritten reports whether a page is written by hand: README.md and
// docs/*.md, not the command reference docs/liqoctl generates from the
// commands' help.
func handWritten(p string) bool {
	return p == "README.md" || (strings.HasPrefix(p, "docs/") && !strings.Contains(strings.TrimPrefix(p, "docs/"), "/"))
}

var (
	linkRE       = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpanRE   = regexp.MustCompile("`[^`]*`")
	headingRE    = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlAnchorRE = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// anchors returns the anchors GitHub gives a page's headings (and explicit
// <a name> / <a id> anchors).
func anchors(p page) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range p.lines() {
		if l.code {
			continue
		}
		for _, m := range htmlAnchorRE.FindAllStringSubmatch(l.text, -1) {
			out[m[1]] = true
		}
		m := headingRE.FindStringSubmatch(l.text)
		if m == nil {
			continue
		}
		slug := slugify(m[2])
		if n := seen[slug]; n > 0 {
			out[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// slugify is GitHub's anchor of a heading: its text in lower case, links
// reduced to their text, punctuation but hyphens and underscores dropped,
// spaces turned to hyphens.
func slugify(heading string) string {
	heading = linkRE.ReplaceAllStringFunc(heading, func(s string) string {
		return s[1:strings.Index(s, "](")]
	})
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_':
			b.WriteRune(r)
		case unicode.IsLetter(r), unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// links returns the targets of a page's Markdown links outside code, with
// their line numbers.
func links(p page) []struct {
	n      int
	target string
} {
	var out []struct {
		n      int
		target string
	}
	for _, l := range p.lines() {
		if l.code {
			continue
		}
		text := codeSpanRE.ReplaceAllString(l.text, "")
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			out = append(out, struct {
				n      int
				target string
			}{l.n, m[1]})
		}
	}
	return out
}

// TestLinks: every relative link of README.md and docs/ leads to a file or
// directory of the repository, and its anchor, if any, to a heading of the
// page it names; every page of docs/ written by hand is linked from another.
func TestLinks(t *testing.T) {
	all := pages(t)
	byPath := map[string]page{}
	for _, p := range all {
		byPath[p.path] = p
	}
	linked := map[string]bool{}
	checked := 0
	for _, p := range all {
		for _, l := range links(p) {
			target := l.target
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			checked++
			where := fmt.Sprintf("%s:%d: link %q", p.path, l.n, target)
			file, anchor, _ := strings.Cut(target, "#")
			resolved := p.path
			if file != "" {
				if strings.HasPrefix(file, "/") {
					t.Errorf("%s: absolute path; make it relative to the page", where)
					continue
				}
				resolved = path.Clean(path.Join(path.Dir(p.path), file))
				if resolved == ".." || strings.HasPrefix(resolved, "../") {
					t.Errorf("%s leads out of the repository", where)
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(resolved))); err != nil {
					t.Errorf("%s: no such file or directory %s", where, resolved)
					continue
				}
				if resolved != p.path {
					linked[resolved] = true
				}
			}
			if anchor == "" {
				continue
			}
			target2, ok := byPath[resolved]
			if !ok {
				if strings.HasSuffix(resolved, ".md") {
					b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(resolved)))
					if err != nil {
						t.Errorf("%s: %v", where, err)
						continue
					}
					target2 = page{path: resolved, text: string(b)}
				} else {
					t.Errorf("%s: an anchor into %s, which is not a Markdown page", where, resolved)
					continue
				}
			}
			if !anchors(target2)[anchor] {
				t.Errorf("%s: %s has no heading with the anchor #%s", where, resolved, anchor)
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked %d relative links: expected the documentation's", checked)
	}
	for _, p := range all {
		if p.path != "README.md" && handWritten(p.path) && !linked[p.path] {
			t.Errorf("%s is linked from no other page", p.path)
		}
	}
}

// commandPrefixes are how a documented command line runs liqoctl, and
// playgroundPrefixes liqo-playground.
var (
	commandPrefixes    = []string{"liqoctl", "bin/liqoctl", "./liqoctl"}
	playgroundPrefixes = []string{"liqo-playground", "bin/liqo-playground"}
)

// checkCommandLine checks the arguments of a documented command line
// (words, the program's name first): a liqoctl line with liqoctl's tree,
// save liqoctl playground's arguments, which go to liqo-playground, and
// a liqo-playground line with the playground's tree. ok is false for the
// lines of other programs.
func checkCommandLine(words []string) (ok bool, err error) {
	switch {
	case len(words) > 1 && slices.Contains(commandPrefixes, words[0]) && words[1] == "playground":
		_, err = liqoctl.CheckArgsOf(playground.NewCommand(), words[2:])
	case len(words) > 0 && slices.Contains(commandPrefixes, words[0]):
		_, err = liqoctl.CheckArgs(words[1:])
	case len(words) > 0 && slices.Contains(playgroundPrefixes, words[0]):
		_, err = liqoctl.CheckArgsOf(playground.NewCommand(), words[1:])
	default:
		return false, nil
	}
	return true, err
}

// shellBlock reports whether a fenced block's language is a shell's.
func shellBlock(info string) (shell, console bool) {
	switch info {
	case "sh", "bash", "shell", "zsh":
		return true, false
	case "console", "shell-session":
		return true, true
	}
	return false, false
}

// TestCommandLines: every liqoctl and liqo-playground command line in a
// shell block of README.md and docs/ (in a console block, the lines of a
// "$ " prompt) names a runnable command of the program's tree, with flags
// it has and the arguments it takes, as the program checks them before
// running anything (pkg/liqoctl's CheckArgs, which TestSeedLinesParse
// uses too).
func TestCommandLines(t *testing.T) {
	checked := 0
	for _, p := range pages(t) {
		type block struct {
			start int
			text  strings.Builder
		}
		var cur *block
		var blocks []*block
		for _, l := range p.lines() {
			shell, console := shellBlock(l.info)
			switch {
			case l.fence && cur == nil && shell:
				cur = &block{start: l.n}
			case l.fence && cur != nil:
				blocks = append(blocks, cur)
				cur = nil
			case cur != nil && console:
				if cmd, ok := strings.CutPrefix(strings.TrimSpace(l.text), "$ "); ok {
					cur.text.WriteString(cmd + "\n")
				}
			case cur != nil:
				cur.text.WriteString(l.text + "\n")
			}
		}
		if cur != nil {
			t.Errorf("%s:%d: a code block is never closed", p.path, cur.start)
		}
		for _, b := range blocks {
			for _, cmdline := range liqoctl.CommandLines(b.text.String()) {
				ok, err := checkCommandLine(liqoctl.ShellWords(cmdline))
				if !ok {
					continue
				}
				checked++
				if err != nil {
					t.Errorf("%s (block at line %d): %s: %v", p.path, b.start, cmdline, err)
				}
			}
		}
	}
	if checked < 40 {
		t.Errorf("checked %d liqoctl command lines: expected the documentation's", checked)
	}
}

// history are patterns of development history: run-by-run narrative,
// project milestones, the project's own specification documents. The
// documentation describes the system as it is; git keeps its history.
var history = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bstops? [0-9]+`),
	regexp.MustCompile(`(?i)\bthis stop\b`),
	regexp.MustCompile(`(?i)before its cuts`),
	regexp.MustCompile(`(?i)\bsessions?\b`),
	regexp.MustCompile(`(?i)\bissues? (#)?[0-9]+`),
	regexp.MustCompile(`(?i)\btoday'?s?\b`),
	regexp.MustCompile(`(?i)\bseeds?\b`),
}

// TestNoDevelopmentHistory: README.md and the hand-written pages of docs/
// mention none of the history patterns.
func TestNoDevelopmentHistory(t *testing.T) {
	for _, p := range pages(t) {
		if !handWritten(p.path) {
			continue
		}
		for _, l := range p.lines() {
			for _, re := range history {
				if m := re.FindString(l.text); m != "" {
					t.Errorf("%s:%d: %q reads as development history: %s", p.path, l.n, m, strings.TrimSpace(l.text))
				}
			}
		}
	}
}

// TestReadmeShort: the README stays an entry point; details go to docs/.
func TestReadmeShort(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the details to a page of docs/", n, readmeMaxLines)
	}
}
