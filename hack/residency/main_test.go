package main

import (
	"debug/elf"
	"testing"
)

func TestPackageOf(t *testing.T) {
	for symbol, want := range map[string]string{
		"k8s.io/api/core/v1.(*Pod).Marshal":                                      "k8s.io/api/core/v1",
		"type:*k8s.io/api/core/v1.Pod":                                           "k8s.io/api/core/v1",
		"go:itab.*k8s.io/api/core/v1.Pod,k8s.io/apimachinery/pkg/runtime.Object": "k8s.io/api/core/v1",
		"gopkg.in/yaml%2ev3.(*parser).parse":                                     "gopkg.in/yaml%2ev3",
		"slices.SortFunc[go.shape.[]string,go.shape.string]":                     "slices",
		"github.com/google/cel-go/cel.NewEnv.func1":                              "github.com/google/cel-go/cel",
		"runtime.gcdata":                    "runtime",
		"go:buildinfo":                      "",
		"gclocals·g2BeySu+wFnoycgXfElmcg==": "",
	} {
		if got := packageOf(symbol); got != want {
			t.Errorf("packageOf(%q) = %q, want %q", symbol, got, want)
		}
	}
}

func TestGroupOfTakesTheLongestModule(t *testing.T) {
	modules := []string{"github.com/kro-agent/kro-agent", "k8s.io/api", "k8s.io/apimachinery", "sigs.k8s.io/structured-merge-diff/v6"}
	for symbol, want := range map[string]string{
		"k8s.io/apimachinery/pkg/runtime.(*Scheme).New":                  "k8s.io/apimachinery",
		"k8s.io/api/apps/v1.(*Deployment).Reset":                         "k8s.io/api",
		"sigs.k8s.io/structured-merge-diff/v6/typed.(*TypedValue).Merge": "sigs.k8s.io/structured-merge-diff/v6",
		"encoding/json.Marshal":                                          "std",
		"go:func.*":                                                      "(.text, runtime-generated)",
	} {
		if got := groupOf(".text", symbol, modules); got != want {
			t.Errorf("groupOf(%q) = %q, want %q", symbol, got, want)
		}
	}
	if got := groupOf(".gopclntab", "runtime.functab", modules); got != lineTables {
		t.Errorf("a symbol of the line tables is in %q", got)
	}
}

func TestTallyCountsEachByteOnceWherePresent(t *testing.T) {
	text := &elf.Section{SectionHeader: elf.SectionHeader{Name: ".text", Addr: 0x1000, Size: 3 * pageSize}}
	syms := []elf.Symbol{
		// A function on the first page; a table on the second, holding
		// a function named within it; a function on the third, and past
		// its end bytes no symbol names.
		{Name: "k8s.io/api/core/v1.(*Pod).Marshal", Value: 0x1000, Size: 0x1000},
		{Name: "runtime.table", Value: 0x2000, Size: 0x1000},
		{Name: "runtime.main", Value: 0x2800, Size: 0x800},
		{Name: "runtime.tail", Value: 0x3000, Size: 0x800},
		{Name: "runtime.tailtable", Value: 0x3000, Size: 0x10},
	}
	present := map[uint64]bool{0x1000: true, 0x2000: false, 0x3000: true}
	got := map[string]share{}
	for _, s := range tally([]*elf.Section{text}, syms, []string{"k8s.io/api"}, present) {
		got[s.name] = s
	}
	want := map[string]share{
		"k8s.io/api":         {name: "k8s.io/api", mapped: 0x1000, resident: 0x1000},
		"std":                {name: "std", mapped: 0x1800, resident: 0x800},
		"(.text, no symbol)": {name: "(.text, no symbol)", mapped: 0x800, resident: 0x800},
	}
	if len(got) != len(want) {
		t.Fatalf("tally = %+v, want %+v", got, want)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %+v, want %+v", name, got[name], w)
		}
	}
}
