package output

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/liqo-go/liqo/apis"
)

// Flags are -o/--output and --template of every liqoctl command that prints
// a Kubernetes object or a document: defined here only, so that every such
// command takes kubectl's formats (json, yaml, name, jsonpath=...,
// jsonpath-as-json=..., go-template=...) and prints them with
// k8s.io/cli-runtime's printers, as kubectl does.
type Flags struct {
	print *genericclioptions.PrintFlags
	// objects: the command prints Kubernetes objects, which have a name
	// for -o name; a document (info, version) has none.
	objects bool
}

// NewObjectFlags returns the flags of a command that prints a Kubernetes
// object, as a manifest for users to apply elsewhere. def is the format
// without -o: "" when the command prints nothing unless asked (it creates
// the object instead), "yaml" when printing is what it does.
func NewObjectFlags(def string) *Flags {
	return &Flags{print: genericclioptions.NewPrintFlags("").WithDefaultOutput(def), objects: true}
}

// NewDocumentFlags returns the flags of a command whose -o prints a document
// that is no Kubernetes object (info, version): every format but name.
// Without -o the command prints its human-readable form.
func NewDocumentFlags() *Flags {
	p := genericclioptions.NewPrintFlags("")
	p.NamePrintFlags = nil
	return &Flags{print: p}
}

// AddFlags adds -o/--output and --template to cmd; what says what -o prints
// (and, for a command that creates without it, that it prints instead).
func (f *Flags) AddFlags(cmd *cobra.Command, what string) {
	fs := cmd.Flags()
	usage := fmt.Sprintf("%s, in this format: %s", what, strings.Join(f.Formats(), ", "))
	fs.VarP(formatValue{f}, "output", "o", usage)
	// --template and --allow-missing-template-keys, as kubectl's.
	f.print.TemplatePrinterFlags.AddFlags(cmd)
	f.print.OutputFlagSpecified = func() bool { return cmd.Flag("output").Changed }
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(f.Formats(), cobra.ShellCompDirectiveNoFileComp))
}

// Formats lists the formats -o takes; those ending in = take their template
// after it (-o jsonpath={.metadata.name}).
func (f *Flags) Formats() []string {
	var out []string
	for _, format := range f.print.AllowedFormats() {
		if isTemplate(format) {
			format += "="
		}
		out = append(out, format)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Set sets the format, as -o does: for commands run as a library and tests.
func (f *Flags) Set(format string) error { return formatValue{f}.Set(format) }

// Requested tells whether the command is to print: -o or --template given,
// or a default format.
func (f *Flags) Requested() bool {
	return *f.print.OutputFormat != "" || *f.print.TemplatePrinterFlags.TemplateArgument != ""
}

// PrintObject prints obj as a manifest to apply elsewhere: without its
// status and the metadata the API server sets (uid, resourceVersion,
// creationTimestamp, generation, managedFields), which are this cluster's
// and which an apply elsewhere would refuse or carry over wrongly. obj's
// apiVersion and kind are filled in from liqoctl's scheme when unset.
func (f *Flags) PrintObject(w io.Writer, obj runtime.Object) error {
	p, err := f.printer()
	if err != nil {
		return err
	}
	return printers.NewTypeSetter(apis.NewScheme()).ToPrinter(printers.ResourcePrinterFunc(func(obj runtime.Object, w io.Writer) error {
		m, err := Manifest(obj)
		if err != nil {
			return err
		}
		return p.PrintObj(m, w)
	})).PrintObj(obj, w)
}

// PrintSeparator writes what keeps apart two objects PrintObject prints in
// a row: a YAML document separator; the other formats need none.
func (f *Flags) PrintSeparator(w io.Writer) error {
	if *f.print.OutputFormat == "yaml" {
		_, err := fmt.Fprintln(w, "---")
		return err
	}
	return nil
}

// PrintDocument prints doc, a value with a JSON form that is no Kubernetes
// object (info's report, version's): as JSON or YAML, or through a template
// of its JSON form.
func (f *Flags) PrintDocument(w io.Writer, doc any) error {
	p, err := f.printer()
	if err != nil {
		return err
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	// runtime.Unknown is the printers' object for raw JSON: they print it
	// as it is, where a typed object would need an apiVersion and kind.
	return p.PrintObj(&runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}, w)
}

func (f *Flags) printer() (printers.ResourcePrinter, error) {
	p, err := f.print.ToPrinter()
	if err != nil {
		return nil, fmt.Errorf("--output: %w", err)
	}
	return p, nil
}

// Manifest returns obj, which has its apiVersion and kind, as an
// unstructured object without its status and the metadata the API server
// sets.
func Manifest(obj runtime.Object) (*unstructured.Unstructured, error) {
	// Through its JSON form, not runtime.DefaultUnstructuredConverter,
	// which ignores omitzero and would print empty structs.
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(raw, &u.Object); err != nil {
		return nil, err
	}
	if u.GetAPIVersion() == "" || u.GetKind() == "" {
		return nil, fmt.Errorf("%T has no apiVersion or kind", obj)
	}
	delete(u.Object, "status")
	for _, field := range []string{"creationTimestamp", "resourceVersion", "uid", "generation", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(u.Object, "metadata", field)
	}
	return u, nil
}

// isTemplate tells the formats whose template follows an "=" (or comes
// from --template).
func isTemplate(format string) bool {
	return strings.HasPrefix(format, "jsonpath") || strings.HasPrefix(format, "go-template") || strings.HasPrefix(format, "template")
}

// formatValue is -o's value: a format the command prints is checked as the
// flag is parsed, so that a wrong one is a usage error naming -o (exit 2),
// before anything runs.
type formatValue struct{ f *Flags }

func (v formatValue) String() string { return *v.f.print.OutputFormat }
func (v formatValue) Type() string   { return "format" }

func (v formatValue) Set(s string) error {
	name, template, hasTemplate := strings.Cut(s, "=")
	if !slices.Contains(v.f.print.AllowedFormats(), strings.ToLower(name)) {
		return fmt.Errorf("unknown format %q: the formats are %s", s, strings.Join(v.f.Formats(), ", "))
	}
	if hasTemplate && template == "" {
		return fmt.Errorf("-o %s needs a template after the =", s)
	}
	*v.f.print.OutputFormat = s
	if !hasTemplate && isTemplate(name) {
		// The template comes from --template, which may follow.
		return nil
	}
	// Parse the template now: a bad one is a usage error as well.
	if _, err := v.f.print.ToPrinter(); err != nil {
		return err
	}
	return nil
}
