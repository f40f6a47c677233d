"""A fresh Maven project that compiles Kotlin against io.zkrecipes:zkrecipes-kotlin, the way a
user's project would (shared by readme_examples.py and dist_check.py)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def kotlin_version() -> str:
    return re.search(r"<kotlin.version>([^<]+)</kotlin.version>", (ROOT / "kotlin" / "pom.xml").read_text()).group(1)


def make(project: Path, version: str, sources: dict[str, str]) -> str:
    """Writes the project with `sources` (file name -> text), compiles it, and returns the runtime
    classpath Maven resolved (its classes first)."""
    (project / "src" / "main" / "kotlin").mkdir(parents=True, exist_ok=True)
    for name, text in sources.items():
        (project / "src" / "main" / "kotlin" / name).write_text(text)
    (project / "pom.xml").write_text(f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId><artifactId>kotlin-consumer</artifactId><version>1</version>
  <properties><kotlin.compiler.jvmTarget>17</kotlin.compiler.jvmTarget><kotlin.compiler.daemon>false</kotlin.compiler.daemon></properties>
  <dependencies>
    <dependency><groupId>io.zkrecipes</groupId><artifactId>zkrecipes-kotlin</artifactId><version>{version}</version></dependency>
  </dependencies>
  <build>
    <sourceDirectory>src/main/kotlin</sourceDirectory>
    <plugins><plugin>
      <groupId>org.jetbrains.kotlin</groupId><artifactId>kotlin-maven-plugin</artifactId><version>{kotlin_version()}</version>
      <executions><execution><id>compile</id><goals><goal>compile</goal></goals></execution></executions>
    </plugin></plugins>
  </build>
</project>
""")
    done = subprocess.run(["mvn", "-q", "-B", "compile", "dependency:build-classpath", "-DincludeScope=runtime",
                           "-Dmdep.outputFile=cp.txt"], cwd=project, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"FAILED mvn compile in {project}\n{done.stdout}\n{done.stderr}")
    return f"{project / 'target' / 'classes'}:{(project / 'cp.txt').read_text().strip()}"
