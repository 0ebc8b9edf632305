import { expect, test } from 'bun:test'
import { Type } from '@sinclair/typebox'
import { t } from 'elysia'
import { conformOpenApiDocument, conformSchema } from '../../plugins/openapi-document.ts'

// What Elysia writes for its own types, and what OpenAPI 3.1 wants instead (plugins/openapi-document.ts).

const json = (schema: unknown) => JSON.parse(JSON.stringify(schema))

test('t.Nullable becomes a type list with null, and a nullable enum lists null', () => {
  expect(conformSchema(json(t.Nullable(t.String({ format: 'date-time' }))))).toEqual({
    type: ['string', 'null'],
    format: 'date-time',
  })
  expect(conformSchema({ nullable: true, type: 'string', enum: ['a', 'b'] })).toEqual({
    type: ['string', 'null'],
    enum: ['a', 'b', null],
  })
  // An object or a reference that may be null: anyOf with {type: 'null'}.
  expect(conformSchema({ nullable: true, $ref: '#/components/schemas/X' })).toEqual({
    anyOf: [{ $ref: '#/components/schemas/X' }, { type: 'null' }],
  })
})

test('t.Integer is an integer, its bounds kept; nested in a nullable it is an integer or null', () => {
  expect(conformSchema(json(t.Integer({ minimum: 1, maximum: 100 })))).toEqual(
    expect.objectContaining({ type: 'integer', minimum: 1, maximum: 100 }),
  )
  const conformed = conformSchema(json(t.Nullable(t.Integer())))
  expect(conformed).toEqual({ type: ['integer', 'null'] })
  expect(JSON.stringify(conformed)).not.toContain('nullable')
})

test('nothing is left of `nullable` at any depth', () => {
  const schema = json(
    t.Object({ a: t.Nullable(t.Object({ b: t.Array(t.Nullable(t.Number())) })), c: t.Nullable(t.Boolean()) }),
  )
  const text = JSON.stringify(conformSchema(schema))
  expect(text).not.toContain('nullable')
  expect(text).toContain('"null"')
})

test('a body-less response has no content; inline copies of models become references', () => {
  const model = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }
  const document = conformOpenApiDocument({
    openapi: '3.1.0',
    paths: {
      '/things/{id}': {
        delete: { responses: { '204': { description: 'Gone', content: { type: 'void' } } } },
        get: {
          responses: {
            '200': {
              description: 'A thing',
              content: { 'application/json': { schema: { type: 'object', properties: { data: model } } } },
            },
          },
        },
      },
    },
    components: { schemas: { Thing: { ...model, $id: '#/components/schemas/Thing' } } },
  }) as any
  expect(document.paths['/things/{id}'].delete.responses['204']).toEqual({ description: 'Gone' })
  expect(
    document.paths['/things/{id}'].get.responses['200'].content['application/json'].schema.properties.data,
  ).toEqual({ $ref: '#/components/schemas/Thing' })
  expect(document.components.schemas.Thing).toEqual(model)
})

test('a recursive TypeBox type becomes a component, referenced; a record is additionalProperties', () => {
  const Tree = Type.Recursive((Self) => t.Object({ name: t.String(), children: t.Array(Self) }), {
    $id: 'Tree',
  })
  const document = conformOpenApiDocument({
    openapi: '3.1.0',
    paths: {
      '/tree': {
        get: {
          responses: {
            '200': {
              description: 'A tree',
              content: {
                'application/json': {
                  schema: json(t.Object({ tree: Tree, labels: t.Record(t.String(), t.String()) })),
                },
              },
            },
          },
        },
      },
    },
    components: { schemas: {} },
  }) as any
  const schema = document.paths['/tree'].get.responses['200'].content['application/json'].schema
  expect(schema.properties.tree).toEqual({ $ref: '#/components/schemas/Tree' })
  expect(schema.properties.labels).toEqual({ type: 'object', additionalProperties: { type: 'string' } })
  expect(document.components.schemas.Tree.properties.children.items).toEqual({
    $ref: '#/components/schemas/Tree',
  })
  expect(JSON.stringify(document)).not.toContain('"$id"')
})
