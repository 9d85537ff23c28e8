"""What users install and deploy: the public surface of the package, an import graph without circles, the deploy
files."""
