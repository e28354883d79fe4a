// Command residency says whose code and read-only data a running Go program
// holds resident: it reads which pages of the program's binary are present
// in its page tables (/proc/PID/pagemap) and lays them over the symbols of an
// unstripped build of the same source, summed by module.
//
// A binary built with -s -w has no symbols, so the second build must differ
// from the running one by those flags alone; residency checks that the two
// lay out their sections alike.
//
//	go build -trimpath -ldflags '-X ...' -o /tmp/kro-agent.sym ./cmd/agent
//	go run ./hack/residency -pid "$(pgrep -x kro-agent)" -symbols /tmp/kro-agent.sym
//
// Run it as root, or as the program's user: the kernel tells the present
// bit, not the page frames, to anyone allowed to read the process's memory.
package main

import (
	"debug/buildinfo"
	"debug/elf"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

func main() {
	pid := flag.Int("pid", 0, "the running program")
	symbols := flag.String("symbols", "", "an unstripped build of the running binary's source, with its flags but -s -w")
	top := flag.Int("top", 25, "modules to list, by resident bytes")
	flag.Parse()
	if *pid == 0 || *symbols == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(os.Stdout, *pid, *symbols, *top); err != nil {
		fmt.Fprintln(os.Stderr, "residency:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, pid int, symbolsPath string, top int) error {
	exe := fmt.Sprintf("/proc/%d/exe", pid)
	running, err := elf.Open(exe)
	if err != nil {
		return err
	}
	defer running.Close()
	built, err := elf.Open(symbolsPath)
	if err != nil {
		return err
	}
	defer built.Close()
	sections, err := sameLayout(running, built)
	if err != nil {
		return fmt.Errorf("%s and %s: %w", exe, symbolsPath, err)
	}
	syms, err := built.Symbols()
	if err != nil {
		return fmt.Errorf("%s: %w (build it without -s)", symbolsPath, err)
	}
	info, err := buildinfo.ReadFile(symbolsPath)
	if err != nil {
		return err
	}
	modules := []string{info.Main.Path}
	for _, d := range info.Deps {
		modules = append(modules, d.Path)
	}
	pages, err := presentPages(pid, sections)
	if err != nil {
		return err
	}
	report(w, tally(sections, syms, modules, pages), top)
	return nil
}

// sameLayout returns the sections the running binary maps from its file,
// after checking that the symbols build has each at the same address and
// size.
func sameLayout(running, built *elf.File) ([]*elf.Section, error) {
	var mapped []*elf.Section
	for _, s := range running.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || s.Size == 0 {
			continue
		}
		b := built.Section(s.Name)
		if b == nil || b.Addr != s.Addr || b.Size != s.Size {
			return nil, fmt.Errorf("section %s lies elsewhere in the two builds: build the second with the first's flags, but -s -w", s.Name)
		}
		mapped = append(mapped, s)
	}
	if len(mapped) == 0 {
		return nil, errors.New("no section is mapped from the file")
	}
	return mapped, nil
}

const pageSize = 4096

// presentPages reads, for every page of the sections, whether it is present
// in the process's page tables.
func presentPages(pid int, sections []*elf.Section) (map[uint64]bool, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	present := map[uint64]bool{}
	entry := make([]byte, 8)
	for _, s := range sections {
		for page := s.Addr &^ (pageSize - 1); page < s.Addr+s.Size; page += pageSize {
			if _, done := present[page]; done {
				continue
			}
			if _, err := f.ReadAt(entry, int64(page/pageSize*8)); err != nil {
				return nil, fmt.Errorf("reading the page map of process %d: %w", pid, err)
			}
			present[page] = binary.LittleEndian.Uint64(entry)>>63 == 1
		}
	}
	return present, nil
}

// share is what one module, or one section's bytes no symbol names, takes
// of the mapped sections, and how much of it is resident.
type share struct {
	name             string
	mapped, resident uint64
}

// tally gives each byte of the mapped sections to the innermost symbol
// holding it (symbols nest: a table holds entries named within it), and
// each symbol to its module; the bytes no symbol holds are the section's
// own.
func tally(sections []*elf.Section, syms []elf.Symbol, modules []string, present map[uint64]bool) []share {
	sums := map[string]*share{}
	unnamed := func(section string) string {
		if section == ".gopclntab" {
			return lineTables
		}
		// The linker names no symbol for type descriptors and string
		// data, which make most of .rodata.
		return "(" + section + ", no symbol)"
	}
	add := func(name string, from, to uint64) {
		s := sums[name]
		if s == nil {
			s = &share{name: name}
			sums[name] = s
		}
		for from < to {
			page := from &^ (pageSize - 1)
			end := min(to, page+pageSize)
			s.mapped += end - from
			if present[page] {
				s.resident += end - from
			}
			from = end
		}
	}
	for _, sec := range sections {
		var in []elf.Symbol
		for _, sym := range syms {
			if sym.Size > 0 && sym.Value >= sec.Addr && sym.Value < sec.Addr+sec.Size {
				in = append(in, sym)
			}
		}
		sort.Slice(in, func(a, b int) bool {
			if in[a].Value != in[b].Value {
				return in[a].Value < in[b].Value
			}
			return in[a].Size > in[b].Size // the one within goes last
		})
		// Walk the section from one symbol's start to the next, giving
		// the bytes between to the innermost symbol still open.
		end := sec.Addr + sec.Size
		in = append(in, elf.Symbol{Value: end}) // closes the walk
		pos := sec.Addr
		var open []elf.Symbol
		for _, next := range in {
			for pos < next.Value {
				for len(open) > 0 && open[len(open)-1].Value+open[len(open)-1].Size <= pos {
					open = open[:len(open)-1]
				}
				if len(open) == 0 {
					add(unnamed(sec.Name), pos, next.Value)
					pos = next.Value
					break
				}
				inner := open[len(open)-1]
				to := min(inner.Value+inner.Size, next.Value)
				add(groupOf(sec.Name, inner.Name, modules), pos, to)
				pos = to
			}
			open = append(open, next)
		}
	}
	out := make([]share, 0, len(sums))
	for _, s := range sums {
		out = append(out, *s)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].resident > out[b].resident })
	return out
}

// lineTables are every function's tables (.gopclntab); they are paged in
// with the functions that run, wherever those come from.
const lineTables = "(line tables, .gopclntab)"

// groupOf names the module a symbol belongs to: the longest module path
// its package path starts with, "std" for the standard library.
func groupOf(section, symbol string, modules []string) string {
	if section == ".gopclntab" {
		return lineTables
	}
	pkg := packageOf(symbol)
	if pkg == "" {
		return "(" + section + ", runtime-generated)"
	}
	best := ""
	for _, m := range modules {
		if (pkg == m || strings.HasPrefix(pkg, m+"/")) && len(m) > len(best) {
			best = m
		}
	}
	if best == "" {
		return "std"
	}
	return best
}

// packageOf returns the import path of the package a Go symbol belongs to,
// or "" for a symbol the compiler or linker made for no package.
func packageOf(symbol string) string {
	s := symbol
	for _, prefix := range []string{"type:", "go:itab.", "go:info.", "go:string.", "go:func."} {
		s = strings.TrimPrefix(s, prefix)
	}
	s = strings.TrimLeft(s, "*(")
	if strings.HasPrefix(s, "go:") || strings.HasPrefix(s, "gclocals") || s == "" {
		return ""
	}
	// The path ends at the first dot after its last slash; a dot in the
	// path's last element is escaped as %2e.
	// An itab is named for a type and an interface, a generic function's
	// instance for its type arguments: the first name is what counts.
	s = s[:min(indexOr(s, ",", len(s)), indexOr(s, "[", len(s)))]
	slash := strings.LastIndex(s, "/")
	dot := strings.Index(s[slash+1:], ".")
	if dot < 0 {
		return ""
	}
	return s[:slash+1+dot]
}

func indexOr(s, sub string, otherwise int) int {
	if i := strings.Index(s, sub); i >= 0 {
		return i
	}
	return otherwise
}

// report lists the top shares, by resident bytes, and the sum of all.
func report(w io.Writer, shares []share, top int) {
	var mapped, resident uint64
	for _, s := range shares {
		mapped += s.mapped
		resident += s.resident
	}
	fmt.Fprintf(w, "%11s %9s  %s\n", "resident MB", "mapped MB", "module")
	for i, s := range shares {
		if i == top {
			break
		}
		fmt.Fprintf(w, "%11.2f %9.2f  %s\n", mb(s.resident), mb(s.mapped), s.name)
	}
	fmt.Fprintf(w, "%11.2f %9.2f  %s\n", mb(resident), mb(mapped), "all")
}

func mb(n uint64) float64 { return float64(n) / (1 << 20) }
