package controllermanager

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/reflection"
)

// reflectionFlagNames are the flag prefixes of the reflected kinds, in
// the order --help lists them (Liqo's virtual kubelet names them so).
var reflectionFlagNames = []struct{ kind, flag string }{
	{reflection.ConfigMaps, "configmap"},
	{reflection.Secrets, "secret"},
	{reflection.Services, "service"},
	{reflection.EndpointSlices, "endpointslice"},
	{reflection.Ingresses, "ingress"},
	{reflection.Events, "event"},
	{reflection.PersistentVolumeClaims, "persistentvolumeclaim"},
}

// addReflectionFlags binds --<kind>-reflection-workers and
// --<kind>-reflection-type for every reflected kind.
func (o *Options) addReflectionFlags(fs *pflag.FlagSet) {
	for _, k := range reflectionFlagNames {
		fs.Var(&reflectionWorkers{o.Reflection, k.kind}, k.flag+"-reflection-workers",
			fmt.Sprintf("%s reflected in parallel per provider (0 disables their reflection)", k.kind))
		if k.kind == reflection.Events || k.kind == reflection.PersistentVolumeClaims {
			// Events and volume status flow back from the provider: no
			// local object to annotate.
			continue
		}
		fs.Var(&reflectionPolicy{o.Reflection, k.kind}, k.flag+"-reflection-type",
			fmt.Sprintf("which %s are reflected: %s (all but those annotated %s) or %s (only those annotated %s)",
				k.kind, forge.DenyList, forge.SkipReflectionAnnotation, forge.AllowList, forge.AllowReflectionAnnotation))
	}
}

// validateReflection names the flag of a bad reflection option.
func (o *Options) validateReflection() error {
	for _, k := range reflectionFlagNames {
		if err := reflection.ValidateKinds(map[string]reflection.KindOptions{k.kind: o.Reflection[k.kind]}); err != nil {
			return fmt.Errorf("--%s-reflection-workers/--%s-reflection-type: %w", k.flag, k.flag, err)
		}
	}
	return reflection.ValidateKinds(o.Reflection)
}

type reflectionWorkers struct {
	m    map[string]reflection.KindOptions
	kind string
}

func (w *reflectionWorkers) String() string {
	if w.m == nil {
		return ""
	}
	return strconv.Itoa(w.m[w.kind].Workers)
}

func (w *reflectionWorkers) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want a number of workers, 0 or more")
	}
	o := w.m[w.kind]
	o.Workers = n
	w.m[w.kind] = o
	return nil
}

func (w *reflectionWorkers) Type() string { return "int" }

type reflectionPolicy struct {
	m    map[string]reflection.KindOptions
	kind string
}

func (p *reflectionPolicy) String() string {
	if p.m == nil {
		return ""
	}
	return string(p.m[p.kind].Policy)
}

func (p *reflectionPolicy) Set(s string) error {
	var policy forge.Policy
	switch {
	case strings.EqualFold(s, string(forge.DenyList)):
		policy = forge.DenyList
	case strings.EqualFold(s, string(forge.AllowList)):
		policy = forge.AllowList
	default:
		return fmt.Errorf("want %s or %s", forge.DenyList, forge.AllowList)
	}
	o := p.m[p.kind]
	o.Policy = policy
	p.m[p.kind] = o
	return nil
}

func (p *reflectionPolicy) Type() string { return "string" }
