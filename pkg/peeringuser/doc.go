// Package peeringuser is the consumer's side of a peering user (the
// provider's side, liqoctl generate peering-user and peer-command, is
// pkg/liqoctl/peeringuser, which documents the user and its rights): the
// out-of-band token (Token) and the check of the provider's API server
// against the CA it carries (VerifyServer), who the token authenticates
// (WhoAmI), and the consumer's first use of the user (Claim). The
// controller manager runs them for liqoctl peer out-of-band
// (pkg/controllermanager/outofband).
//
// The token carries the provider's CA next to the ServiceAccount token, so
// that the consumer checks the API server's certificate before sending the
// credential: kube-apiserver does not send its CA in the TLS handshake, and
// fetching it without a credential needs anonymous access, so a CA hash
// alone could not be checked.
package peeringuser
