package liqoctl

// ReleasePlatforms are the systems liqoctl is released for, as GOOS/GOARCH
// (make release builds an archive of each, and the krew manifest lists
// them); TestBuildsEverywhere checks liqoctl builds for each.
func ReleasePlatforms() []string {
	return []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}
}
