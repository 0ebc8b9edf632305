// Which methods a path answers to, so an existing path under the wrong method gets 405 with `Allow`
// instead of a bare 404. Built once from the finished app's route list.

interface RouteLike {
  method: string
  path: string
}

function compile(path: string): RegExp {
  const pattern = (path.length > 1 ? path.replace(/\/+$/, '') : path)
    .split('/')
    .map((segment) => {
      if (segment.startsWith(':')) return '[^/]+'
      if (segment === '*') return '.*'
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    })
    .join('/')
  return new RegExp(`^${pattern}/?$`)
}

export function routeTable() {
  let compiled: { method: string; pattern: RegExp }[] = []
  return {
    load(routes: RouteLike[]) {
      compiled = routes.map((route) => ({ method: route.method.toUpperCase(), pattern: compile(route.path) }))
    },
    allowedMethods(path: string): string[] {
      const methods = new Set<string>()
      for (const route of compiled) if (route.pattern.test(path)) methods.add(route.method)
      if (methods.has('GET')) methods.add('HEAD')
      return [...methods].sort()
    },
  }
}
