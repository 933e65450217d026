package peer

import "github.com/spf13/cobra"

// NewCreateCommands returns the subcommands of liqoctl create this package
// implements: nonce, resourceslice and virtualnode.
func NewCreateCommands() []*cobra.Command {
	return []*cobra.Command{newCreateNonceCommand("nonce"), newCreateResourceSliceCommand(), newCreateVirtualNodeCommand()}
}

// NewGetCommands returns the subcommands of liqoctl get this package
// implements: nonce and kubeconfig.
func NewGetCommands() []*cobra.Command {
	return []*cobra.Command{newGetNonceCommand(), newGetKubeconfigCommand()}
}

// NewGenerateCommands returns the subcommands of liqoctl generate this
// package implements: tenant, identity, and nonce (the same as create
// nonce, under the name the step-by-step peering is often written with).
func NewGenerateCommands() []*cobra.Command {
	return []*cobra.Command{newGenerateTenantCommand(), newGenerateIdentityCommand(), newCreateNonceCommand("nonce")}
}

// NewDeleteCommands returns the subcommands of liqoctl delete this package
// implements: resourceslice and virtualnode.
func NewDeleteCommands() []*cobra.Command {
	return []*cobra.Command{newDeleteResourceSliceCommand(), newDeleteVirtualNodeCommand()}
}
