"""Fresh Maven projects that compile against io.zkrecipes:zkrecipes (Java) or
io.zkrecipes:zkrecipes-kotlin (Kotlin), the way a user's project would (shared by
readme_examples.py and dist_check.py)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def kotlin_version() -> str:
    return re.search(r"<kotlin.version>([^<]+)</kotlin.version>", (ROOT / "kotlin" / "pom.xml").read_text()).group(1)


def java(project: Path, version: str, sources: dict[str, str]) -> str:
    """Writes the project with `sources` (file name -> text), compiles it, and returns the
    classpath Maven resolved (its classes first)."""
    return _compiled(project, "java", sources, f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId><artifactId>java-consumer</artifactId><version>1</version>
  <properties><maven.compiler.release>17</maven.compiler.release></properties>
  <dependencies>
    <dependency><groupId>io.zkrecipes</groupId><artifactId>zkrecipes</artifactId><version>{version}</version></dependency>
  </dependencies>
  <build><plugins><plugin>
    <groupId>org.apache.maven.plugins</groupId><artifactId>maven-compiler-plugin</artifactId><version>3.14.1</version>
  </plugin></plugins></build>
</project>
""", [])


def kotlin(project: Path, version: str, sources: dict[str, str]) -> str:
    """``java`` for Kotlin sources; the classpath is the runtime one (the Kotlin JAR's three
    dependencies come the way a user gets them)."""
    return _compiled(project, "kotlin", sources, f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
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
""", ["-DincludeScope=runtime"])


def _compiled(project: Path, language: str, sources: dict[str, str], pom: str, scope: list[str]) -> str:
    (project / "src" / "main" / language).mkdir(parents=True, exist_ok=True)
    for name, text in sources.items():
        source = project / "src" / "main" / language / name
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(text)
    (project / "pom.xml").write_text(pom)
    done = subprocess.run(["mvn", "-q", "-B", "compile", "dependency:build-classpath", *scope, "-Dmdep.outputFile=cp.txt"],
                          cwd=project, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"FAILED mvn compile in {project}\n{done.stdout}\n{done.stderr}")
    return f"{project / 'target' / 'classes'}:{(project / 'cp.txt').read_text().strip()}"
