package crds

// KeepsStoredVersions is keepsStoredVersions, for the external tests.
var KeepsStoredVersions = keepsStoredVersions
