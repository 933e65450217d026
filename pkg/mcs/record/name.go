package record

// Name is the name of the record of cluster source's export of Service
// namespace/service. The consumer's and the provider's records share the
// consumer's tenant namespace, so the source is in the name; cluster IDs,
// namespaces and Service names are DNS labels, so the name is a DNS
// subdomain of at most 191 characters.
func Name(source, namespace, service string) string {
	return source + "." + namespace + "." + service
}
